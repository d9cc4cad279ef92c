package dashgen

import "fmt"

// Prefix-cache rules (issue 21). A shared-prefix class X is paired, by
// name, with its cold twin X-cold (identical lengths, a prefix unique per
// request) among a target's classes. The speedup is read from the TTFT
// native histograms the two classes already export, by recording rules:
// Prometheus-native, aggregated over a fleet's probers like every SLI, and
// with no figure the daemon would have to keep.

// ColdSuffix names a shared-prefix class's cold twin: class X's twin is X
// + ColdSuffix (the contract of the generated twins).
const ColdSuffix = "-cold"

// prefixWindow is the window of the recorded speedup and cached fraction;
// prefixReference the span of the reference (their median) the alert
// compares with.
const (
	prefixWindow    = "1h"
	prefixReference = "1d"
)

// Recording rule names of the prefix cache.
func recPrefixSpeedup(q string) string {
	return "llmprobe:prefix_cache_speedup:" + q + "_rate" + prefixWindow
}

const recPrefixCachedFraction = "llmprobe:prefix_cache_cached_fraction:ratio_rate" + prefixWindow

// prefixQuantiles are the speedup's recorded quantiles (the alert reads p50).
var prefixQuantiles = []struct {
	name string
	q    float64
}{{"p50", 0.5}, {"p95", 0.95}}

// prefixRules record the speedup and the cached fraction and alert on
// their regression. They read the SLI's TTFT rate and event count
// (baseline traffic outside ladders, by region, target and class), so they
// run in the SLI's group, after it.
func prefixRules(o RuleOptions) []Rule {
	rate, events := recTTFTRate(prefixWindow), recLatencyEvents(prefixWindow)
	// enough keeps a class whose window holds at least MinSamples ok first
	// tokens: a quantile of a handful says nothing.
	enough := fmt.Sprintf("(%s >= %d)", events, o.PrefixMinSamples)
	var out []Rule
	for _, q := range prefixQuantiles {
		// cold over cached: the cold twin's quantile, renamed to its
		// twin's class, over the twin's quantile; each side with enough
		// samples. Classes without a twin (and the twins themselves)
		// find no partner and record nothing.
		out = append(out, Rule{Record: recPrefixSpeedup(q.name), Expr: fmt.Sprintf(
			"label_replace(\n"+
				"  histogram_quantile(%[1]s, %[2]s{class=~\".+%[4]s\"}) and on (%[5]s) %[3]s,\n"+
				"  \"class\", \"$1\", \"class\", \"(.+)%[4]s\"\n"+
				")\n"+
				"/ on (%[5]s)\n"+
				"(histogram_quantile(%[1]s, %[2]s) and on (%[5]s) %[3]s)",
			num(q.q), rate, enough, ColdSuffix, sliBy)})
	}
	rw := o.dur(prefixWindow)
	out = append(out, Rule{Record: recPrefixCachedFraction, Expr: fmt.Sprintf(
		"sum by (%[1]s) (rate(%[2]s[%[3]s]))\n"+
			"/\n"+
			"(sum by (%[1]s) (rate(%[4]s[%[3]s])) > 0)",
		sliBy, o.Mixin.sel("llmprobe_cached_prompt_tokens_total", sliSel), rw, o.Mixin.sel("llmprobe_cache_reported_prompt_tokens_total", sliSel))})
	return append(out, prefixAlert(o))
}

// prefixAlert fires when a class's speedup (p50), or its cached-token
// fraction, fell below PrefixCacheFraction of its median over the last
// day. Each arm carries a `signal` label saying which. Never for the
// prober's own trouble: a starved generator adds the same lag to both
// twins and pulls the speedup towards 1, so a target whose generator was
// invalid at any time in the window is left out (LLMProbeGeneratorInvalid
// says so instead); a prober not scraped records nothing, so nothing
// fires (LLMProbeAbsent).
func prefixAlert(o RuleOptions) Rule {
	frac := num(o.PrefixCacheFraction)
	day, win := o.dur(prefixReference), o.dur(prefixWindow)
	speedup := recPrefixSpeedup("p50")
	arm := func(signal, series, extra string) string {
		return fmt.Sprintf("label_replace(\n"+
			"  %[1]s\n"+
			"    < %[2]s * quantile_over_time(0.5, %[1]s[%[3]s])%[4]s,\n"+
			"  \"signal\", %[5]q, \"\", \"\"\n"+
			")", series, frac, day, extra, signal)
	}
	// The fraction is judged only for a class paired with a cold twin
	// whose speedup is recorded (enough samples on both sides): other
	// classes' fractions are the cache's incidental hits.
	paired := fmt.Sprintf("\n    and on (%s) %s", sliBy, speedup)
	return Rule{
		Alert: "LLMProbePrefixCacheRegression",
		Expr: fmt.Sprintf("(\n%s\nor\n%s\n)\nunless on (region, target)\n"+
			"  (min by (region, target) (min_over_time(%s[%s])) == 0)",
			arm("speedup", speedup, ""), arm("cached_fraction", recPrefixCachedFraction, paired), o.Mixin.sel("llmprobe_generator_valid"), win),
		For:    o.dur("10m"),
		Labels: o.Mixin.alertLabels("LLMProbePrefixCacheRegression"),
		Annotations: map[string]string{
			"summary": "{{ $labels.target }}/{{ $labels.class }} lost its prefix-cache benefit ({{ $labels.signal }})",
			"description": fmt.Sprintf("Over the last %s of baseline traffic outside ladders, the prefix-cache %s of {{ $labels.target }}/{{ $labels.class }} is {{ $value | printf \"%%.3g\" }}, below %s × its %s median: "+
				"signal=speedup is the cold twin %s%s's TTFT p50 over this class's (at least %d ok first tokens each); "+
				"signal=cached_fraction is the share of prompt tokens the server reports it served from its cache. A deploy that dropped the cache, a router that lost affinity or a smaller KV pool all do this.",
				prefixWindow, "{{ $labels.signal }}", frac, prefixReference, "{{ $labels.class }}", ColdSuffix, o.PrefixMinSamples),
			"runbook_url": o.Mixin.runbookURL("LLMProbePrefixCacheRegression"),
		},
	}
}

// selPrefixPair selects the baseline outside ladders of the selected
// classes and their cold twins (choosing class X shows X-cold beside it).
const selPrefixPair = selJob + `, target=~"$target", class=~"($class)(` + ColdSuffix + `)?", traffic="baseline", during!="ladder"`

// prefixRow is the Overview's prefix-cache row: cached vs cold TTFT, the
// speedup and the cached-token fraction, with the alert's reference.
func prefixRow(o RuleOptions) row {
	frac := num(o.PrefixCacheFraction)
	speedup := recPrefixSpeedup("p50")
	ttft := func(p, name string) q {
		return query(fmt.Sprintf(`histogram_quantile(%s, sum by (target, class) (rate(llmprobe_time_to_first_token_seconds{%s}[$__rate_interval])))`, p, selPrefixPair),
			name+" {{target}} {{class}}")
	}
	return row{title: "Prefix cache (shared-prefix classes and their cold twins)", panels: []panel{
		{kind: "timeseries", title: "TTFT: shared prefix vs cold twin", unit: unitSeconds, width: 8,
			description: "TTFT p50 and p95 of each selected class and of its cold twin (the class named <class>" + ColdSuffix + ": same lengths, a prefix unique per request), baseline outside ladders. The gap between the two is what the target's prefix cache saves.",
			queries:     []q{ttft("0.5", "p50"), ttft("0.95", "p95")}},
		{kind: "timeseries", title: "Prefix-cache speedup (cold / cached TTFT, 1h)", unit: unitBurn, width: 8,
			description: fmt.Sprintf("The cold twin's TTFT quantile over the shared-prefix class's, over the last hour (recording rules; recorded only with at least %d first tokens on each side). 1 = the cache saves nothing. LLMProbePrefixCacheRegression fires below the dashed reference: %s × the p50 speedup's 1-day median.", o.PrefixMinSamples, frac),
			queries: []q{
				query(fmt.Sprintf(`%s{%s}`, speedup, selSLI), "p50 {{target}} {{class}}").want(ExpectMaybe),
				query(fmt.Sprintf(`%s{%s}`, recPrefixSpeedup("p95"), selSLI), "p95 {{target}} {{class}}").want(ExpectMaybe),
				query(fmt.Sprintf(`%s * quantile_over_time(0.5, %s{%s}[%s])`, frac, speedup, selSLI, prefixReference), "alert below {{target}} {{class}}").want(ExpectMaybe),
			}},
		{kind: "timeseries", title: "Cached-token fraction (1h)", unit: unitRatio, width: 8, min: f64(0), max: f64(1),
			description: "Share of prompt tokens the server says it served from its prompt cache (usage cached tokens, Anthropic cache reads, llama.cpp timings), among requests whose server reported a count; absent for a server that reports none. A cold twin should stay near 0: anything more is the chat template or a system prompt shared by every request.",
			queries: []q{
				query(fmt.Sprintf(`%s{target=~"$target", class=~"($class)(%s)?"}`, recPrefixCachedFraction, ColdSuffix), "{{target}} {{class}}").want(ExpectMaybe),
			}},
	}}
}
