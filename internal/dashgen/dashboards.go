package dashgen

import (
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/llmprobe/llmprobe/internal/cause"
)

// Stable dashboard uids: links, bookmarks and alert annotations rely on them.
const (
	UIDOverview = "llmprobe-overview"
	UIDCapacity = "llmprobe-capacity"
	UIDHealth   = "llmprobe-prober-health"
)

// Label selectors built from the dashboard variables. Every selector of a
// scraped series starts with the job variable, so the dashboards work
// whatever the scrape job is called (and can tell several probers apart).
// The SLI recording rules aggregate by region, target and class (the job
// is dropped, see sliBy), so their panels select with selSLI.
const (
	selJob = `job=~"$job"`
	selTCT = selJob + `, target=~"$target", class=~"$class", traffic=~"$traffic", during=~"$during"`
	// selTCTs selects series that have a traffic label but no during label
	// (the configured arrival rate: a schedule, not requests).
	selTCTs = selJob + `, target=~"$target", class=~"$class", traffic=~"$traffic"`
	// selBase is the baseline of the selected targets and classes, both
	// during values (the row comparing them).
	selBase = selJob + `, target=~"$target", class=~"$class", traffic="baseline"`
	selTC   = selJob + `, target=~"$target", class=~"$class"`
	selT    = selJob + `, target=~"$target"`
	// selSLI selects the SLI recording rules (no job label).
	selSLI = `target=~"$target", class=~"$class"`
	// ofProber keeps the series of a job's instances that are llmprobe
	// processes (the Go and process collectors' series carry no llmprobe_
	// prefix): appended to a query of them.
	ofProber = ` and on (job, instance) llmprobe_build_info`
)

// noBudget is what a budget panel says when its series are absent: the
// budget gauges are only exported for a target with a budget.
const noBudget = "No budget configured for the selected targets"

// variables are a board's template variables: the job variable lists the
// jobs of the probers the mixin's selector selects.
func variables(m Mixin, withTraffic bool) []cog.Builder[dashboard.VariableModel] {
	vs := []cog.Builder[dashboard.VariableModel]{
		dashboard.NewDatasourceVariableBuilder("datasource").
			Label("Data source").
			Type("prometheus"),
		// The scrape jobs with a prober in them: "All" expands to these
		// (no custom all value), never to every job of the Prometheus.
		dashboard.NewQueryVariableBuilder("job").
			Label("Job").
			Description("Prometheus scrape jobs that scrape llmprobe (label_values of llmprobe_build_info)").
			Datasource(dsRef()).
			Query(dashboard.StringOrMap{String: cog.ToPtr("label_values(" + m.sel("llmprobe_build_info") + ", job)")}).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Sort(dashboard.VariableSortAlphabeticalAsc).
			Multi(true).
			IncludeAll(true),
		dashboard.NewQueryVariableBuilder("target").
			Label("Target").
			Datasource(dsRef()).
			Query(dashboard.StringOrMap{String: cog.ToPtr(`label_values(llmprobe_requests_planned_total{` + m.jobSel() + `}, target)`)}).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Sort(dashboard.VariableSortAlphabeticalAsc).
			Multi(true).
			IncludeAll(true).
			AllValue(".*"),
		dashboard.NewQueryVariableBuilder("class").
			Label("Class").
			Datasource(dsRef()).
			Query(dashboard.StringOrMap{String: cog.ToPtr(`label_values(llmprobe_requests_planned_total{` + m.jobSel() + `, target=~"$target"}, class)`)}).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Sort(dashboard.VariableSortAlphabeticalAsc).
			Multi(true).
			IncludeAll(true).
			AllValue(".*"),
	}
	if withTraffic {
		vs = append(vs, dashboard.NewCustomVariableBuilder("traffic").
			Label("Traffic").
			Description("baseline = steady probing (the SLO traffic, outside ladders: see During); ladder = capacity ladders; probe = one-shot probes").
			Values(dashboard.StringOrMap{String: cog.ToPtr("baseline,ladder,probe")}).
			Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: cog.ToPtr("baseline")}, Value: dashboard.StringOrArrayOfString{String: cog.ToPtr("baseline")}}).
			Multi(true).
			IncludeAll(true).
			AllValue(".*"),
			dashboard.NewCustomVariableBuilder("during").
				Label("During").
				Description("none = planned while no ladder loaded the target (what the SLO counts); ladder = planned during a ladder or its settle time (ladder traffic, and baseline requests the ladder's own load may have hurt)").
				Values(dashboard.StringOrMap{String: cog.ToPtr("none,ladder")}).
				Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: cog.ToPtr("none")}, Value: dashboard.StringOrArrayOfString{String: cog.ToPtr("none")}}).
				Multi(true).
				IncludeAll(true).
				AllValue(".*"))
	}
	return vs
}

// quantiles returns p50/p95/p99 queries over a native histogram.
func quantiles(metric, sel string) []q {
	out := make([]q, 0, 3)
	for _, p := range []string{"0.5", "0.95", "0.99"} {
		out = append(out, query(
			fmt.Sprintf(`histogram_quantile(%s, sum by (target, class) (rate(%s{%s}[$__rate_interval])))`, p, metric, sel),
			fmt.Sprintf("p%s {{target}} {{class}}", pctName(p))))
	}
	return out
}

func pctName(p string) string {
	switch p {
	case "0.5":
		return "50"
	case "0.95":
		return "95"
	default:
		return "99"
	}
}

func overview(o RuleOptions) board {
	availBudget := 1 - o.AvailabilityObjective
	latBudget := 1 - o.LatencyObjective
	return board{
		uid:   UIDOverview,
		file:  "llmprobe-overview.json",
		title: "llmprobe / Overview",
		description: "SLO status, latency percentiles from native histograms, outcomes and goodput per target and class. " +
			"Latency is measured from each request's planned time; failures are excluded from latency percentiles but counted in outcomes.",
		traffic: true,
		rows: []row{
			{title: "SLO (baseline traffic)", panels: []panel{
				{kind: "stat", title: "Availability, 1h (not failed / sent)", unit: unitRatio, width: 6, height: 5,
					description: fmt.Sprintf("Share of the baseline requests sent in the last hour that the target did not fail (rejected, http_error, timeout, transport_error, stream_error count against it). Unsent, cancelled and censored requests and client-side connection artifacts are not counted; a slow success is the latency SLI's. Objective %g.", o.AvailabilityObjective),
					queries:     []q{query(fmt.Sprintf(`1 - %s{%s}`, recAvailErrors("1h"), selSLI), "{{target}} {{class}}").want(ExpectRules)}},
				{kind: "stat", title: "TTFT within gate, 1h", unit: unitRatio, width: 6, height: 5,
					description: fmt.Sprintf("Fraction of successful first tokens within the class's TTFT gate (native histogram, gate rounded down to a supported value). Objective %g.", o.LatencyObjective),
					queries:     []q{query(fmt.Sprintf(`1 - %s{%s}`, recLatencyErrors("1h"), selSLI), "{{target}} {{class}}").want(ExpectRules)}},
				{kind: "stat", title: "Availability error budget left, 3d", unit: unitRatio, width: 6, height: 5,
					description: fmt.Sprintf("1 - (error ratio over 3 days / error budget %g). Negative means the budget is spent.", availBudget),
					queries:     []q{query(fmt.Sprintf(`1 - %s{%s} / %g`, recAvailErrors("3d"), selSLI, availBudget), "{{target}} {{class}}").want(ExpectRules)}},
				{kind: "stat", title: "Latency error budget left, 3d", unit: unitRatio, width: 6, height: 5,
					description: fmt.Sprintf("1 - (slow-first-token ratio over 3 days / error budget %g). Negative means the budget is spent.", latBudget),
					queries:     []q{query(fmt.Sprintf(`1 - %s{%s} / %g`, recLatencyErrors("3d"), selSLI, latBudget), "{{target}} {{class}}").want(ExpectRules)}},
				{kind: "timeseries", title: "Burn rate, 1h and 5m", unit: unitBurn, width: 24,
					description: "Error ratio divided by the error budget; 1 spends the budget exactly over the SLO window; the fast page fires at 14.4 on both 1h and 5m.",
					queries: []q{
						query(fmt.Sprintf(`%s{%s} / %g`, recAvailErrors("1h"), selSLI, availBudget), "availability 1h {{target}} {{class}}").want(ExpectRules),
						query(fmt.Sprintf(`%s{%s} / %g`, recAvailErrors("5m"), selSLI, availBudget), "availability 5m {{target}} {{class}}").want(ExpectRules),
						query(fmt.Sprintf(`%s{%s} / %g`, recLatencyErrors("1h"), selSLI, latBudget), "latency 1h {{target}} {{class}}").want(ExpectRules),
						query(fmt.Sprintf(`%s{%s} / %g`, recLatencyErrors("5m"), selSLI, latBudget), "latency 5m {{target}} {{class}}").want(ExpectRules),
					}},
			}},
			answersRow(o),
			{title: "Latency (from planned time, successful requests)", panels: []panel{
				{kind: "timeseries", title: "Time to first token", unit: unitSeconds,
					description: "histogram_quantile over rate of the native histogram llmprobe_time_to_first_token_seconds; from the planned send time to the first content token.",
					queries:     quantiles("llmprobe_time_to_first_token_seconds", selTCT)},
				{kind: "heatmap", title: "Time to first token heatmap", unit: unitSeconds,
					description: "Distribution of TTFT over time, from the native histogram llmprobe_time_to_first_token_seconds (its fine exponential buckets; Grafana draws a native histogram as heatmap cells).",
					queries:     []q{query(fmt.Sprintf(`sum(rate(llmprobe_time_to_first_token_seconds{%s}[$__rate_interval]))`, selTCT), "TTFT")}},
				{kind: "timeseries", title: "Inter-chunk latency", unit: unitSeconds,
					description: "Gap between consecutive content chunks (role-only and empty chunks are not tokens).",
					queries:     quantiles("llmprobe_inter_chunk_latency_seconds", selTCT)},
				{kind: "timeseries", title: "Time per output token", unit: unitSeconds,
					description: "(end - first token) / (output tokens - 1) per successful request.",
					queries:     quantiles("llmprobe_time_per_output_token_seconds", selTCT)},
				{kind: "timeseries", title: "End-to-end duration (ok only)", unit: unitSeconds,
					description: "From the planned send time to the end of the stream, successful requests only.",
					queries:     quantiles("llmprobe_request_duration_seconds", selTCT)},
				{kind: "heatmap", title: "Time to first token heatmap (classic buckets)", unit: unitSeconds,
					description: "The same distribution from the histogram's classic buckets (_bucket series), when Prometheus keeps them (always_scrape_classic_histograms, or a Prometheus without native histograms); empty otherwise.",
					noValue:     "No classic buckets scraped: see the native heatmap above",
					queries: []q{{expr: fmt.Sprintf(`sum by (le) (rate(llmprobe_time_to_first_token_seconds_bucket{%s}[$__rate_interval]))`, selTCT),
						legend: "{{le}}", heatmap: true, expect: ExpectMaybe}}},
			}},
			{title: "Outcomes, goodput and tokens", panels: []panel{
				{kind: "timeseries", title: "Outcomes by outcome and reason", unit: unitReqPerSec,
					description: "Every planned arrival ends in exactly one outcome; reasons refine unsent and failures.",
					queries:     []q{query(fmt.Sprintf(`sum by (outcome, reason) (rate(llmprobe_requests_total{%s}[$__rate_interval]))`, selTCT), "{{outcome}} {{reason}}")}},
				{kind: "timeseries", title: "Planned, dispatched and good", unit: unitReqPerSec,
					description: "Planned arrivals (the schedule), dispatched requests and good requests (ok and within the class's gates).",
					queries: []q{
						query(fmt.Sprintf(`sum by (target, class) (rate(llmprobe_requests_planned_total{%s}[$__rate_interval]))`, selTCT), "planned {{target}} {{class}}"),
						query(fmt.Sprintf(`sum by (target, class) (rate(llmprobe_requests_dispatched_total{%s}[$__rate_interval]))`, selTCT), "dispatched {{target}} {{class}}"),
						query(fmt.Sprintf(`sum by (target, class) (rate(llmprobe_requests_good_total{%s}[$__rate_interval]))`, selTCT), "good {{target}} {{class}}"),
					}},
				{kind: "timeseries", title: "Good fraction (good / planned)", unit: unitRatio, min: f64(0), max: f64(1),
					description: "Good requests (ok and within every gate of the class) over planned arrivals over the rate interval: the prober's view of the whole schedule, unsent included. Not the availability SLI (see the SLO row).",
					queries:     []q{query(fmt.Sprintf(`sum by (target, class) (rate(llmprobe_requests_good_total{%[1]s}[$__rate_interval])) / sum by (target, class) (rate(llmprobe_requests_planned_total{%[1]s}[$__rate_interval]))`, selTCT), "{{target}} {{class}}")}},
				{kind: "timeseries", title: "Tokens", unit: unitTokPerSec,
					description: "Token throughput by type (input/output as counted by the protocol adapter).",
					queries:     []q{query(fmt.Sprintf(`sum by (target, class, type) (rate(llmprobe_tokens_total{%s}[$__rate_interval]))`, selTCT), "{{type}} {{target}} {{class}}")}},
			}},
			prefixRow(o),
			{title: "Baseline during ladders (kept out of the SLO)", panels: []panel{
				{kind: "timeseries", title: "Baseline good fraction: during ladders vs not", unit: unitRatio, min: f64(0), max: f64(1), width: 8,
					description: "Good / planned baseline requests, by during: none (the service, what the SLO counts) and ladder (planned while a ladder loaded the target, or within its settle time: how much the ladder's own load hurt the baseline).",
					queries: []q{query(fmt.Sprintf(`sum by (target, class, during) (rate(llmprobe_requests_good_total{%[1]s}[$__rate_interval])) / sum by (target, class, during) (rate(llmprobe_requests_planned_total{%[1]s}[$__rate_interval]))`, selBase),
						"{{during}} {{target}} {{class}}")}},
				{kind: "timeseries", title: "Baseline TTFT p95: during ladders vs not", unit: unitSeconds, width: 8,
					description: "TTFT p95 of successful baseline requests (from the planned time), by during: a ladder queues the target, and baseline requests sent then wait in the same queue.",
					queries: []q{query(fmt.Sprintf(`histogram_quantile(0.95, sum by (target, class, during) (rate(llmprobe_time_to_first_token_seconds{%s}[$__rate_interval])))`, selBase),
						"p95 {{during}} {{target}} {{class}}")}},
				{kind: "timeseries", title: "Baseline requests planned during ladders", unit: unitReqPerSec, width: 8,
					description: "Baseline arrivals labelled during=\"ladder\" (not in the SLO) against all baseline arrivals.",
					queries: []q{
						query(fmt.Sprintf(`sum by (target, class) (rate(llmprobe_requests_planned_total{%s, during="ladder"}[$__rate_interval]))`, selBase), "during ladders {{target}} {{class}}"),
						query(fmt.Sprintf(`sum by (target, class) (rate(llmprobe_requests_planned_total{%s}[$__rate_interval]))`, selBase), "all {{target}} {{class}}"),
					}},
			}},
		},
	}
}

func capacity() board {
	return board{
		uid:   UIDCapacity,
		file:  "llmprobe-capacity.json",
		title: "llmprobe / Capacity",
		description: "Rate ladders: the last ladder's curve (TTFT p95 and goodput against offered rate), capacity and knee over time, " +
			"with target identity changes (model/version) annotated.",

		annotations: []annotation{{
			name:  "Target identity changes",
			expr:  fmt.Sprintf(`changes(llmprobe_target_identity_changes_total{%s}[2m]) > 0`, selT),
			title: "identity change {{target}}",
		}},
		rows: []row{
			{title: "Last ladder", panels: []panel{
				{kind: "xychart", title: "Last ladder: TTFT p95 against offered rate", unit: unitSeconds, xUnit: unitReqPerSec,
					description: "One point per ladder step: offered arrival rate (x) and TTFT p95 of the step (y).",
					queries: []q{
						query(fmt.Sprintf(`llmprobe_ladder_step_offered_rate_requests_per_second{%s}`, selTC), "").asInstant().want(ExpectLadder),
						query(fmt.Sprintf(`llmprobe_ladder_step_ttft_p95_seconds{%s}`, selTC), "").asInstant().want(ExpectLadder),
					}},
				{kind: "xychart", title: "Last ladder: goodput against offered rate", unit: unitReqPerSec, xUnit: unitReqPerSec,
					description: "One point per ladder step: offered arrival rate (x) and goodput of the step (y).",
					queries: []q{
						query(fmt.Sprintf(`llmprobe_ladder_step_offered_rate_requests_per_second{%s}`, selTC), "").asInstant().want(ExpectLadder),
						query(fmt.Sprintf(`llmprobe_ladder_step_goodput_requests_per_second{%s}`, selTC), "").asInstant().want(ExpectLadder),
					}},
				{kind: "stat", title: "Last ladder run", unit: unitFromNow, width: 8, height: 5,
					description: "When the last ladder of each target finished.",
					queries:     []q{query(fmt.Sprintf(`llmprobe_ladder_last_run_timestamp_seconds{%s} * 1000`, selT), "{{target}}").want(ExpectLadder)}},
				{kind: "stat", title: "Capacity (last ladder)", unit: unitReqPerSec, width: 8, height: 5,
					description: "The class's offered rate at the highest valid step that met its gates. bound=lower: no valid step above it failed, so the capacity is at least this.",
					queries:     []q{query(fmt.Sprintf(`llmprobe_capacity_requests_per_second{%s}`, selTC), "{{target}} {{class}} {{scope}} ({{bound}})").want(ExpectLadder)}},
				{kind: "table", title: "Target identity", unit: unitNone, width: 8, height: 5,
					description: "Model and version reported by each target (llmprobe_target_info).",
					queries:     []q{query(fmt.Sprintf(`llmprobe_target_info{%s}`, selT), "").asInstant()}},
			}},
			{title: "Over time", panels: []panel{
				{kind: "timeseries", title: "Capacity over time", unit: unitReqPerSec,
					description: "Capacity of each ladder run (bound=lower: at least this); annotations mark target identity changes.",
					queries: []q{
						query(fmt.Sprintf(`llmprobe_capacity_requests_per_second{%s}`, selTC), "{{target}} {{class}} {{scope}} ({{bound}})").want(ExpectLadder),
						query(fmt.Sprintf(`quantile_over_time(0.5, %s{%s}[7d])`, recCapacity, selTC), "7d median {{target}} {{class}}").want(ExpectLadder),
					}},
				{kind: "timeseries", title: "Knee over time", unit: unitReqPerSec,
					description: "Offered rate at which latency starts to rise faster than load in each ladder; no point when a ladder found no knee (every step below it).",
					queries:     []q{query(fmt.Sprintf(`llmprobe_ladder_knee_requests_per_second{%s}`, selTC), "{{target}} {{class}}").want(ExpectMaybe)}},
				{kind: "timeseries", title: "Capacity by target version", unit: unitReqPerSec,
					description: "Capacity joined with the target's model and version labels (recording rule).",
					queries:     []q{query(fmt.Sprintf(`%s{%s}`, recCapacityByVersion, selTC), "{{target}} {{class}} {{model}} {{version}}").want(ExpectLadder)}},
				{kind: "timeseries", title: "Target identity changes", unit: unitCount,
					description: "Changes of model/version detected by the prober.",
					queries:     []q{query(fmt.Sprintf(`increase(llmprobe_target_identity_changes_total{%s}[$__rate_interval])`, selT), "{{target}}").want(ExpectMaybe)}},
			}},
		},
	}
}

func health() board {
	return board{
		uid:   UIDHealth,
		file:  "llmprobe-prober-health.json",
		title: "llmprobe / Prober health",
		description: "Can the measurements be trusted? Dispatch lag, unsent requests by reason, in-flight requests, " +
			"generator validity, budgets and scrape health.",
		traffic: true,
		rows: []row{
			{title: "Generator", panels: []panel{
				{kind: "timeseries", title: "Dispatch lag", unit: unitSeconds,
					description: "Actual send time minus planned time (native histogram quantiles) and the maximum over the last interval.",
					queries: append(quantiles("llmprobe_dispatch_lag_seconds", selTCT),
						query(fmt.Sprintf(`llmprobe_dispatch_lag_max_seconds{%s}`, selT), "max {{target}}"))},
				{kind: "timeseries", title: "Unsent by reason", unit: unitReqPerSec,
					description: "Planned arrivals never sent: client_cap (in-flight cap), budget, shutdown, rate_cap. client_cap makes latency figures untrustworthy.",
					queries:     []q{query(fmt.Sprintf(`sum by (target, reason) (rate(llmprobe_requests_total{outcome="unsent", %s}[$__rate_interval]))`, selTCT), "{{target}} {{reason}}").want(ExpectMaybe)}},
				{kind: "stat", title: "Generator valid", unit: unitNone, width: 8, height: 5, min: f64(0), max: f64(1),
					description: "1 when the open-loop generator kept its schedule (lag and unsent within limits), 0 when the measurements cannot be trusted. It judges the prober, not the target.",
					queries:     []q{query(fmt.Sprintf(`min by (target) (llmprobe_generator_valid{%s})`, selT), "{{target}}")}},
				{kind: "timeseries", title: "Why the generator is invalid", unit: unitNone, width: 8, min: f64(0), max: f64(1),
					description: "1 while a cause holds (the status page says what to do). " + causeMeanings(cause.Generator),
					queries:     []q{query(fmt.Sprintf(`llmprobe_generator_invalid_cause{%s} == 1`, selT), "{{target}} {{cause}}").want(ExpectMaybe)}},
				{kind: "timeseries", title: "Prober host: Go scheduler latency p99", unit: unitSeconds, width: 8,
					description: "How long the prober's runnable goroutines waited for a CPU (go_sched_latencies_seconds): high scheduler latency together with dispatch lag means host trouble (a starved prober), not target trouble.",
					queries:     []q{query(`histogram_quantile(0.99, sum by (instance, le) (rate(go_sched_latencies_seconds_bucket{`+selJob+`}[$__rate_interval])`+ofProber+`))`, "p99 {{instance}}")}},
				{kind: "timeseries", title: "Prober host: CPU used", unit: unitSuffixCores, width: 8,
					description: "CPU seconds per second the prober process used (process_cpu_seconds_total): near its CPU limit, the prober itself is the bottleneck.",
					queries:     []q{query(`rate(process_cpu_seconds_total{`+selJob+`}[$__rate_interval])`+ofProber, "{{instance}}")}},
				{kind: "timeseries", title: "Arrival rate", unit: unitReqPerSec, width: 16,
					description: "Configured arrival rate and the planned and dispatched rates actually produced.",
					queries: []q{
						query(fmt.Sprintf(`llmprobe_arrival_rate_requests_per_second{%s}`, selTCTs), "configured {{target}} {{class}} {{traffic}}"),
						query(fmt.Sprintf(`sum by (target, class, traffic) (rate(llmprobe_requests_planned_total{%s}[$__rate_interval]))`, selTCT), "planned {{target}} {{class}} {{traffic}}"),
						query(fmt.Sprintf(`sum by (target, class, traffic) (rate(llmprobe_requests_dispatched_total{%s}[$__rate_interval]))`, selTCT), "dispatched {{target}} {{class}} {{traffic}}"),
					}},
				{kind: "timeseries", title: "Prober host: CPU pressure, throttling, run-queue wait", unit: unitRatio, width: 24,
					description: "What starves the prober from outside Go (docs/figures.md, Host causes): the host's CPU pressure (share of time a runnable task waited for a CPU), its busy share, the share of the prober cgroup's quota periods throttled, and the prober threads' run-queue wait per second. Any of them high while the dispatch lag is high is the prober host's trouble (" + cause.Join(cause.Host) + "), not the target's.",
					queries: []q{
						query(`rate(llmprobe_host_cpu_pressure_waiting_seconds_total{`+selJob+`}[$__rate_interval])`, "host CPU pressure {{instance}}").want(ExpectMaybe),
						query(`rate(llmprobe_host_cpu_busy_seconds_total{`+selJob+`}[$__rate_interval]) / on (job, instance) llmprobe_host_cpus{`+selJob+`}`, "host CPU busy {{instance}}").want(ExpectMaybe),
						query(`rate(llmprobe_cgroup_cpu_throttled_periods_total{`+selJob+`}[$__rate_interval]) / on (job, instance) (rate(llmprobe_cgroup_cpu_periods_total{`+selJob+`}[$__rate_interval]) > 0)`, "cgroup throttled periods {{instance}}").want(ExpectMaybe),
						query(`rate(llmprobe_run_queue_wait_seconds_total{`+selJob+`}[$__rate_interval])`, "prober run-queue wait {{instance}}").want(ExpectMaybe),
					}},
			}},
			{title: "In flight", panels: []panel{
				{kind: "timeseries", title: "In-flight requests", unit: unitCount,
					description: "Requests sent and not yet finished.",
					queries:     []q{query(fmt.Sprintf(`llmprobe_in_flight_requests{%s}`, selT), "{{target}}")}},
				{kind: "timeseries", title: "Oldest in-flight request", unit: unitSeconds,
					description: "Age of the oldest request still in flight (from its planned time).",
					queries:     []q{query(fmt.Sprintf(`llmprobe_oldest_in_flight_seconds{%s}`, selT), "{{target}}")}},
			}},
			{title: "Budget and scrape", panels: []panel{
				{kind: "timeseries", title: "Budget left: tokens", unit: unitTokens, width: 8,
					description: "Tokens left in today's budget (absent when no token budget is configured).", noValue: noBudget,
					queries: []q{query(fmt.Sprintf(`llmprobe_budget_remaining_tokens{%s}`, selT), "{{target}}").want(ExpectMaybe)}},
				{kind: "timeseries", title: "Budget left: requests", unit: unitCount, width: 8,
					description: "Requests left in today's budget (absent when no request budget is configured).", noValue: noBudget,
					queries: []q{query(fmt.Sprintf(`llmprobe_budget_remaining_requests{%s}`, selT), "{{target}}").want(ExpectMaybe)}},
				{kind: "stat", title: "Scrape up", unit: unitNone, width: 8, height: 8, min: f64(0), max: f64(1),
					description: "1 when Prometheus scraped the prober successfully (the jobs of the Job variable).",
					queries:     []q{query(`up{`+selJob+`}`, "{{job}} {{instance}}")}},
				{kind: "timeseries", title: "Scrape duration", unit: unitSeconds, width: 12,
					description: "How long Prometheus took to scrape the prober.",
					queries:     []q{query(`scrape_duration_seconds{`+selJob+`}`, "{{job}} {{instance}}")}},
				{kind: "table", title: "Build", unit: unitNone, width: 12,
					description: "Version of each running prober.",
					queries:     []q{query(`llmprobe_build_info{`+selJob+`}`, "").asInstant()}},
			}},
		},
	}
}

// boards returns every dashboard in a stable order.
func boards(o RuleOptions) []board {
	bs := []board{overview(o), capacity(), health(), fleet()}
	for i := range bs {
		bs[i] = bs[i].scoped(o.Mixin)
	}
	return bs
}

// scoped is b with the mixin's selector before the job variable in every
// query: every query of a scraped series selects the job variable
// (TestNoJobNameAssumed), so that is every query of a prober's series; the
// SLI recording rules' panels are scoped by the rules themselves.
func (b board) scoped(m Mixin) board {
	b.mixin = m
	scope := func(expr string) string { return strings.ReplaceAll(expr, selJob, m.jobSel()) }
	for i := range b.annotations {
		b.annotations[i].expr = scope(b.annotations[i].expr)
	}
	for _, r := range b.rows {
		for _, p := range r.panels {
			for k := range p.queries {
				p.queries[k].expr = scope(p.queries[k].expr)
			}
		}
	}
	return b
}

// causeMeanings is each cause with what it means, from the one cause table
// (internal/cause): "host_starved: the generator was late and …; …".
func causeMeanings(cs []cause.Cause) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = string(c) + ": " + c.Meaning()
	}
	return strings.Join(parts, "; ") + "."
}
