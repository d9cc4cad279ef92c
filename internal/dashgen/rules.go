package dashgen

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/llmprobe/llmprobe/internal/slo"
)

// RuleOptions are the tunables of the generated rules. They are constants of
// the generated files: change DefaultRuleOptions (or call Rules with other
// options) and re-run go generate.
type RuleOptions struct {
	// AvailabilityObjective is the target ratio of sent baseline requests
	// the target did not fail.
	AvailabilityObjective float64
	// LatencyObjective is the target fraction of first tokens within the gate.
	LatencyObjective float64
	// CorrectnessObjective is the target fraction of judged answer checks
	// that pass (answers.go).
	CorrectnessObjective float64
	// MinBadEvents is the minimum-event guard: a burn-rate alert also needs at
	// least this many bad requests in its long window, so that low-rate
	// probing never pages or tickets on a single failure.
	MinBadEvents int
	// CapacityFraction: capacity below this fraction of the reference
	// (7-day median, or the previous model/version) is a regression.
	CapacityFraction float64
	// Gates are the TTFT gate values (seconds, ascending) the latency SLI can
	// evaluate. histogram_fraction takes a scalar bound, so a class's gate
	// (llmprobe_slo_ttft_seconds) is rounded down to the nearest listed value.
	// A gate below the first value has no latency SLI: rounding it up would
	// count too-slow first tokens as good.
	Gates []float64
	// DispatchLagP99 is the dispatch-lag p99 (seconds) above which the
	// generator is considered invalid.
	DispatchLagP99 float64
	// PrefixCacheFraction: a prefix-cache speedup (p50) or cached-token
	// fraction below this fraction of its 1-day median is a regression
	// (LLMProbePrefixCacheRegression).
	PrefixCacheFraction float64
	// PrefixMinSamples is the fewest ok first tokens a shared-prefix
	// class and its cold twin each need in the window for a speedup to be
	// recorded.
	PrefixMinSamples int
	// TimeScale multiplies every range window and every `for` duration of
	// the rules (0 or 1: as shipped). Recording rules keep their names (the
	// nominal window), so dashboards read a scaled file unchanged. Tests use
	// it to run the shipped rules end to end in minutes: 1/120 turns the
	// 1h/5m page windows into 30s/3s and the 7-day capacity median into
	// 84 minutes. Results are rounded to whole seconds, at least 1s.
	TimeScale float64
	// CertExpiryTicket and CertExpiryPage: LLMProbeCertificateExpiringSoon
	// tickets, then pages, when a target's certificate expires within
	// them (cert.go; 0 = DefaultCertExpiryTicket, DefaultCertExpiryPage).
	CertExpiryTicket, CertExpiryPage time.Duration
	// Mixin is the deployment's configuration: runbook URLs, severities,
	// the scrape selector and extra alert labels (zero value: the defaults).
	Mixin Mixin
}

// dur scales a nominal Prometheus duration by TimeScale.
func (o RuleOptions) dur(nominal string) string {
	if o.TimeScale == 0 || o.TimeScale == 1 {
		return nominal
	}
	d, err := model.ParseDuration(nominal)
	if err != nil {
		panic("dashgen: bad nominal duration " + nominal) // a constant of this file
	}
	scaled := time.Duration(float64(d) * o.TimeScale).Round(time.Second)
	return model.Duration(max(scaled, time.Second)).String()
}

// DefaultRuleOptions are the options of the committed rule files.
func DefaultRuleOptions() RuleOptions {
	return RuleOptions{
		AvailabilityObjective: slo.AvailabilityObjective,
		LatencyObjective:      slo.LatencyObjective,
		CorrectnessObjective:  slo.CorrectnessObjective,
		MinBadEvents:          slo.MinBadEvents,
		CapacityFraction:      0.8,
		Gates:                 []float64{0.1, 0.2, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 20, 30},
		DispatchLagP99:        0.05,
		PrefixCacheFraction:   0.6,
		PrefixMinSamples:      20,
		TimeScale:             1,
	}
}

// SLIWindows are the windows the SLI recording rules are computed over.
var SLIWindows = []string{"5m", "30m", "1h", "2h", "6h", "1d", "3d"}

// burnTiers are slo's tiers with their windows as Prometheus durations.
func burnTiers(ts []slo.Tier) []burnTier {
	out := make([]burnTier, len(ts))
	for i, t := range ts {
		out[i] = burnTier{model.Duration(t.Long).String(), model.Duration(t.Short).String(), t.Factor}
	}
	return out
}

// Burn-rate alert tiers (SRE workbook, multiwindow multi-burn-rate), from
// internal/slo.
type burnTier struct {
	long, short string
	factor      float64
}

var (
	pageTiers   = burnTiers(slo.PageTiers())
	ticketTiers = burnTiers(slo.TicketTiers())
)

// sliBy is the aggregation of every SLI: a region label added by relabelling
// keeps probers in different regions apart.
const sliBy = "region, target, class"

// sliSel selects the SLI's traffic: the baseline, minus the requests planned
// while a ladder loaded the target (during="ladder"): the ladder's own load,
// not the service, decided their fate. != keeps series from probers older
// than the label.
const sliSel = `traffic="baseline", during!="ladder"`

// Recording rule names.
func recAvailEvents(w string) string      { return "llmprobe:sli_availability_events:increase" + w }
func recAvailBad(w string) string         { return "llmprobe:sli_availability_bad_events:increase" + w }
func recAvailErrors(w string) string      { return "llmprobe:sli_availability_errors:ratio_rate" + w }
func recTTFTRate(w string) string         { return "llmprobe:sli_ttft_seconds:rate" + w }
func recLatencyEvents(w string) string    { return "llmprobe:sli_latency_events:increase" + w }
func recLatencyErrors(w string) string    { return "llmprobe:sli_latency_errors:ratio_rate" + w }
func recLatencyBad(w string) string       { return "llmprobe:sli_latency_bad_events:increase" + w }
func recGate() string                     { return "llmprobe:slo_ttft_gate:seconds" }
func num(v float64) string                { return strconv.FormatFloat(v, 'g', -1, 64) }
func burnThreshold(f, obj float64) string { return num(roundTo(f*(1-obj), 9)) }

const (
	recCapacityByVersion = "llmprobe:capacity_by_version:requests_per_second"
	// recCapacity is the capacity figure whatever its bound: a reference
	// (7-day median) may include lower bounds, since the true capacity is at
	// least each of them (a median of lower bounds never exceeds the true
	// median), but the figure compared with it must be measured. Its scope
	// (local: one prober's ladder; fleet: a fleet's, published by its
	// coordinator alone) is dropped too: one prober and the fleet it grows
	// into measure the same target's capacity, so the 7-day history carries
	// over, and no instance ever publishes both (no alert fires twice).
	recCapacity = "llmprobe:capacity:requests_per_second"
)

// capacityMeasured selects capacities that are measurements (a valid step
// above failed its gates), never lower bounds.
func (o RuleOptions) capacityMeasured() string {
	return o.Mixin.sel("llmprobe_capacity_requests_per_second", `bound="measured"`)
}

func roundTo(v float64, digits int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', digits, 64), 64)
	return f
}

// RuleFile is a Prometheus rule file.
type RuleFile struct {
	Groups []RuleGroup `yaml:"groups" json:"groups"`
}

// RuleGroup is one group of a rule file.
type RuleGroup struct {
	Name     string `yaml:"name" json:"name"`
	Interval string `yaml:"interval,omitempty" json:"interval,omitempty"`
	Rules    []Rule `yaml:"rules" json:"rules"`
}

// Rule is a recording or alerting rule.
type Rule struct {
	Record      string            `yaml:"record,omitempty" json:"record,omitempty"`
	Alert       string            `yaml:"alert,omitempty" json:"alert,omitempty"`
	Expr        string            `yaml:"expr" json:"expr"`
	For         string            `yaml:"for,omitempty" json:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty" json:"annotations,omitempty"`
}

// Rules returns llmprobe's recording and alerting rules.
func Rules(o RuleOptions) (RuleFile, error) {
	if err := o.validate(); err != nil {
		return RuleFile{}, err
	}
	// Alerts share a group with the recording rules they read: rules of one
	// group are evaluated in order, so an alert never reads a recorded series
	// one interval old (or, with long intervals, past the lookback delta).
	slo := []Rule{{
		Record: recGate(),
		Expr:   fmt.Sprintf("max by (%s) (%s)", sliBy, o.Mixin.sel("llmprobe_slo_ttft_seconds")),
	}}
	for _, w := range SLIWindows {
		slo = append(slo, sliRules(o, w)...)
		slo = append(slo, correctnessRules(o, w)...)
	}
	slo = append(slo, checkPassByVersionRule(o))
	slo = append(slo, sloAlerts(o)...)
	slo = append(slo, answersWrongAfterChange(o))
	slo = append(slo, prefixRules(o)...)
	capacity := append([]Rule{
		{
			Record: recCapacity,
			Expr:   "max without (bound, scope) (" + o.Mixin.sel("llmprobe_capacity_requests_per_second") + ")",
		},
		{
			Record: recCapacityByVersion,
			Expr:   o.capacityByVersionExpr(),
		},
	}, capacityAlerts(o)...)
	f := RuleFile{Groups: []RuleGroup{
		{Name: "llmprobe-slo", Rules: slo},
		{Name: "llmprobe-capacity", Rules: capacity},
		{Name: "llmprobe-prober", Rules: append(proberAlerts(o), certAlerts(o)...)},
	}}
	return f, nil
}

func (o RuleOptions) validate() error {
	switch {
	case o.AvailabilityObjective <= 0 || o.AvailabilityObjective >= 1:
		return fmt.Errorf("dashgen: availability objective %g: want 0 < objective < 1", o.AvailabilityObjective)
	case o.LatencyObjective <= 0 || o.LatencyObjective >= 1:
		return fmt.Errorf("dashgen: latency objective %g: want 0 < objective < 1", o.LatencyObjective)
	case o.CorrectnessObjective <= 0 || o.CorrectnessObjective >= 1:
		return fmt.Errorf("dashgen: correctness objective %g: want 0 < objective < 1", o.CorrectnessObjective)
	case o.MinBadEvents < 1:
		return fmt.Errorf("dashgen: minimum bad events %d: want >= 1", o.MinBadEvents)
	case o.CapacityFraction <= 0 || o.CapacityFraction >= 1:
		return fmt.Errorf("dashgen: capacity fraction %g: want 0 < fraction < 1", o.CapacityFraction)
	case o.PrefixCacheFraction <= 0 || o.PrefixCacheFraction >= 1:
		return fmt.Errorf("dashgen: prefix cache fraction %g: want 0 < fraction < 1", o.PrefixCacheFraction)
	case o.PrefixMinSamples < 1:
		return fmt.Errorf("dashgen: prefix minimum samples %d: want >= 1", o.PrefixMinSamples)
	case len(o.Gates) == 0:
		return fmt.Errorf("dashgen: no TTFT gates")
	case o.DispatchLagP99 <= 0:
		return fmt.Errorf("dashgen: dispatch lag p99 %g: want > 0", o.DispatchLagP99)
	case o.TimeScale < 0 || o.TimeScale > 1:
		return fmt.Errorf("dashgen: time scale %g: want 0 < scale <= 1 (0 = 1)", o.TimeScale)
	}
	if err := o.validateCert(); err != nil {
		return err
	}
	if err := o.Mixin.validate(); err != nil {
		return fmt.Errorf("dashgen: mixin: %w", err)
	}
	for i := 1; i < len(o.Gates); i++ {
		if o.Gates[i] <= o.Gates[i-1] {
			return fmt.Errorf("dashgen: TTFT gates not ascending at %g", o.Gates[i])
		}
	}
	return nil
}

// availSent selects the availability SLI's valid events among
// llmprobe_requests_total: sent requests whose fate is the target's
// (slo.NotEventOutcomes and slo.NotEventReasons are not events; see
// alerts/README.md for why each is left out).
func (o RuleOptions) availSent() string {
	return o.Mixin.sel("llmprobe_requests_total", fmt.Sprintf(`%s, outcome!~"%s", reason!~"%s"`, sliSel,
		strings.Join(slo.NotEventOutcomes, "|"), strings.Join(slo.NotEventReasons, "|")))
}

func sliRules(o RuleOptions, w string) []Rule {
	rw := o.dur(w)
	return []Rule{
		// Valid events: requests sent to the target (every attempt), minus
		// the prober's own artifacts. Unsent arrivals are no event: a
		// prober that cannot send pages its owner (LLMProbeGeneratorInvalid,
		// LLMProbeBudgetExhausted), never the target's.
		{Record: recAvailEvents(w), Expr: fmt.Sprintf(
			`sum by (%s) (increase(%s[%s]))`, sliBy, o.availSent(), rw)},
		// Bad events: the sent requests that did not end ok (rejected,
		// http_error, timeout, transport_error, stream_error). An ok
		// request is never bad here, however slow: slowness is the
		// latency SLI's.
		{Record: recAvailBad(w), Expr: fmt.Sprintf(
			"clamp_min(\n  %s\n  - (sum by (%s) (increase(%s[%s])) or 0 * %s),\n  0\n)",
			recAvailEvents(w), sliBy, o.Mixin.sel("llmprobe_requests_total", sliSel, fmt.Sprintf("outcome=%q", slo.GoodOutcome)), rw, recAvailEvents(w))},
		{Record: recAvailErrors(w), Expr: fmt.Sprintf("%s / (%s > 0)", recAvailBad(w), recAvailEvents(w))},
		{Record: recTTFTRate(w), Expr: fmt.Sprintf(
			`sum by (%s) (rate(%s[%s]))`, sliBy, o.Mixin.sel("llmprobe_time_to_first_token_seconds", sliSel), rw)},
		{Record: recLatencyEvents(w), Expr: fmt.Sprintf(
			`histogram_count(sum by (%s) (increase(%s[%s])))`, sliBy, o.Mixin.sel("llmprobe_time_to_first_token_seconds", sliSel), rw)},
		{Record: recLatencyErrors(w), Expr: latencyErrorsExpr(o, w)},
		{Record: recLatencyBad(w), Expr: fmt.Sprintf("%s * %s", recLatencyEvents(w), recLatencyErrors(w))},
	}
}

// latencyErrorsExpr is 1 - the fraction of first tokens within the class's
// gate; the gate is rounded down to a supported value (none below the first).
func latencyErrorsExpr(o RuleOptions, w string) string {
	var b strings.Builder
	b.WriteString("1 - (\n")
	for i, g := range o.Gates {
		cond := fmt.Sprintf("%s >= %s", recGate(), num(g))
		if i+1 < len(o.Gates) {
			cond += " < " + num(o.Gates[i+1])
		}
		if i > 0 {
			b.WriteString("  or\n")
		}
		fmt.Fprintf(&b, "  (histogram_fraction(0, %s, %s) and on (%s) (%s))\n", num(g), recTTFTRate(w), sliBy, cond)
	}
	b.WriteString(")")
	return b.String()
}

func sloAlerts(o RuleOptions) []Rule {
	type sli struct {
		name, what         string
		errors, bad        func(string) string
		objective          float64
		descriptionSubject string
	}
	slis := []sli{
		{"Availability", "availability", recAvailErrors, recAvailBad, o.AvailabilityObjective,
			"baseline requests sent (outside ladders) failed at the target (rejected, http_error, timeout, transport_error or stream_error; unsent, cancelled and censored requests and client-side connection artifacts are not counted)"},
		{"Latency", "latency", recLatencyErrors, recLatencyBad, o.LatencyObjective,
			"successful baseline first tokens (outside ladders) are slower than the class's TTFT gate"},
		{"Correctness", "correctness", recCorrectErrors, recCorrectBad, o.CorrectnessObjective,
			"judged answer checks failed (a wrong answer, whatever its reason; a check whose request failed is not_judged and not counted)"},
	}
	var out []Rule
	for _, s := range slis {
		for _, sev := range []struct {
			name, forDur string
			tiers        []burnTier
		}{
			{"Page", o.dur("2m"), pageTiers},
			{"Ticket", o.dur("15m"), ticketTiers},
		} {
			var arms []string
			for _, t := range sev.tiers {
				th := burnThreshold(t.factor, s.objective)
				arms = append(arms, fmt.Sprintf(
					"(\n  %s > %s\n  and %s > %s\n  and %s >= %d\n)",
					s.errors(t.long), th, s.errors(t.short), th, s.bad(t.long), o.MinBadEvents))
			}
			name := "LLMProbe" + s.name + "BurnRate" + sev.name
			out = append(out, Rule{
				Alert:       name,
				Expr:        strings.Join(arms, "\nor\n"),
				For:         sev.forDur,
				Labels:      o.Mixin.alertLabels(name, "slo", s.what),
				Annotations: burnAnnotations(o, name, s.what, s.descriptionSubject, s.objective, sev.tiers),
			})
		}
	}
	return out
}

// capacityAlerts compare a measured capacity, never a lower bound, with
// references that may include lower bounds (conservative: see recCapacity).
func capacityAlerts(o RuleOptions) []Rule {
	frac := num(o.CapacityFraction)
	week, forDur := o.dur("7d"), o.dur("10m")
	return []Rule{
		{
			// Like with like: a capacity is compared with the 7-day median of
			// its own identity (a deploy is LLMProbeCapacityRegressionAfterChange's);
			// a target of no known identity, with its own 7-day median.
			Alert: "LLMProbeCapacityRegression",
			Expr: fmt.Sprintf("(%[4]s and on (job, instance, target, class) %[1]s)\n"+
				"  < %[2]s * quantile_over_time(0.5, %[4]s[%[5]s])\n"+
				"or\n"+
				"max without (bound, scope) (%[1]s)\n"+
				"  < %[2]s * quantile_over_time(0.5, %[3]s[%[5]s])\n"+
				"  unless on (job, instance, target, class) %[4]s", o.capacityMeasured(), frac, recCapacity, recCapacityByVersion, week),
			For:         forDur,
			Labels:      o.Mixin.alertLabels("LLMProbeCapacityRegression"),
			Annotations: capacityRegressionAnnotations(o, frac, week),
		},
		{
			// A ladder where no step met the gates exports no capacity (never
			// 0 req/s), which would silently clear the alert above in the
			// worst regression. A ladder has run in this process (its
			// timestamp is set), yet capacity measured in the last 7 days is
			// now absent: that is a regression too. A lower bound is a
			// capacity found: it clears this alert.
			Alert: "LLMProbeCapacityLost",
			Expr: "0 * quantile_over_time(0.5, " + recCapacity + "[" + week + "])\n" +
				"  unless on (job, instance, target, class) " + o.Mixin.sel("llmprobe_capacity_requests_per_second") + "\n" +
				"  and on (job, instance, target) " + o.Mixin.sel("llmprobe_ladder_last_run_timestamp_seconds") + "\n" +
				"  unless on (job, instance, target) " + o.Mixin.sel(ladderIdentity, `complete="false"`),
			For:    forDur,
			Labels: o.Mixin.alertLabels("LLMProbeCapacityLost"),
			Annotations: map[string]string{
				"summary":     "{{ $labels.target }}/{{ $labels.class }} has no capacity: no step of the latest ladder met the gates",
				"description": "The latest ladder found no valid step meeting the class's gates (or aborted), though capacity was measured in the last 7 days.",
				"runbook_url": o.Mixin.runbookURL("LLMProbeCapacityLost"),
			},
		},
		{
			Alert: "LLMProbeCapacityRegressionAfterChange",
			Expr: fmt.Sprintf("%[1]s\n"+
				"  < on (job, instance, target, class) group_left ()\n"+
				"  %[2]s * max by (job, instance, target, class) (\n"+
				"    last_over_time(%[1]s[%[4]s])\n"+
				"      unless on (job, instance, target, class, model, version) %[1]s\n"+
				"  )\n"+
				"  and on (job, instance, target, class) %[3]s", recCapacityByVersion, frac, o.capacityMeasured(), week),
			For:         forDur,
			Labels:      o.Mixin.alertLabels("LLMProbeCapacityRegressionAfterChange"),
			Annotations: capacityAfterChangeAnnotations(o, frac, week),
		},
	}
}
