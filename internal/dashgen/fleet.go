package dashgen

import (
	"fmt"

	"github.com/llmprobe/llmprobe/internal/cause"
)

// UIDFleet is the fleet dashboard's stable uid.
const UIDFleet = "llmprobe-fleet"

// Fleet joins: llmprobe_fleet_info{shard, shards} = 1 on every prober (shard
// 0 of 1 when alone) puts a shard index on any per-instance series.
const (
	// byShard appends the shard index to a per-(job, instance) result.
	byShard = ` * on (job, instance) group_left (shard) llmprobe_fleet_info{` + selJob + `}`
	// byShardSeen does the same for a shard that stopped answering (its
	// series stale) from its info of the last hour; a live shard's own
	// current info wins, so a fleet resized within the hour (shards="3",
	// then "5") joins once.
	byShardSeen = ` * on (job, instance) group_left (shard, shards) (max by (job, instance, shard, shards) (llmprobe_fleet_info{` + selJob + `})` +
		` or (max by (job, instance, shard, shards) (last_over_time(llmprobe_fleet_info{` + selJob + `}[1h])) unless on (job, instance) llmprobe_fleet_info{` + selJob + `}))`
)

// fleet is the fleet view: each shard's health (scraped, dispatch lag,
// generator validity, its share of the baseline) beside the fleet's one
// figure (the baseline's rate and latency summed over every instance, the
// capacity its coordinator published with scope="fleet"). A prober alone is
// a fleet of one and shows as shard 0.
func fleet() board {
	return board{
		uid:   UIDFleet,
		file:  "llmprobe-fleet.json",
		title: "llmprobe / Fleet",
		description: "Probers running as one fleet (docs/fleet.md): each shard's scrape, dispatch lag, generator validity and share of the baseline, " +
			"next to the fleet's baseline rate and latency summed over every instance and the capacity its coordinator (shard 0) published with scope=\"fleet\".",
		traffic: true,
		rows: []row{
			{title: "Shards", panels: []panel{
				{kind: "table", title: "Shards", unit: unitNone, width: 8, height: 8,
					description: "Every prober seen in the last hour, its shard index and the fleet's size (llmprobe_fleet_info), and whether its last scrape succeeded (up: 0 is a shard down: its share of the baseline is missing and a fleet ladder's steps are invalid, shard_missing).",
					queries:     []q{query(`up{`+selJob+`}`+byShardSeen, "").asInstant()}},
				{kind: "timeseries", title: "Dispatch lag p99 by shard", unit: unitSeconds, width: 16,
					description: "Each shard's dispatch-lag p99 (actual send time minus planned time). A fleet ladder step is valid only when every shard's is within the ladder's max_lag_p99: the worst shard decides (shard_invalid).",
					queries: []q{query(fmt.Sprintf(`histogram_quantile(0.99, sum by (job, instance) (rate(llmprobe_dispatch_lag_seconds{%s}[$__rate_interval])))%s`, selTCT, byShard),
						"shard {{shard}} {{instance}}")}},
				{kind: "timeseries", title: "Generator valid by shard", unit: unitNone, width: 8, min: f64(0), max: f64(1),
					description: "1 while a shard's open-loop generator keeps its schedule (its own live verdict); 0 means that shard's figures, and a fleet step it takes part in, cannot be trusted.",
					queries: []q{query(fmt.Sprintf(`min by (job, instance, target) (llmprobe_generator_valid{%s})%s`, selT, byShard),
						"shard {{shard}} {{target}}")}},
				{kind: "timeseries", title: "Why a shard is invalid", unit: unitNone, width: 8, min: f64(0), max: f64(1),
					description: "1 while a cause holds on a shard: " + cause.Join(cause.Generator) + " (its status page says what to do).",
					queries: []q{query(fmt.Sprintf(`(llmprobe_generator_invalid_cause{%s} == 1)%s`, selT, byShard),
						"shard {{shard}} {{target}} {{cause}}").want(ExpectMaybe)}},
				{kind: "timeseries", title: "CPU by shard", unit: unitSuffixCores, width: 8,
					description: "CPU seconds per second each shard's process used: a shard near its CPU limit lags its schedule before the others.",
					queries:     []q{query(`rate(process_cpu_seconds_total{`+selJob+`}[$__rate_interval])`+byShard, "shard {{shard}} {{instance}}")}},
			}},
			{title: "The fleet's baseline (every instance together)", panels: []panel{
				{kind: "timeseries", title: "Planned rate: the fleet and each shard", unit: unitReqPerSec,
					description: "Arrivals planned by every shard together (the fleet's rate λ: N independent Poisson streams of λ/N add up to one of rate λ), each shard's share (about λ/N), and the configured rate summed over the shards (λ).",
					queries: []q{
						query(fmt.Sprintf(`sum by (target, class) (rate(llmprobe_requests_planned_total{%s}[$__rate_interval]))`, selTCT), "fleet {{target}} {{class}}"),
						query(fmt.Sprintf(`sum by (job, instance, target) (rate(llmprobe_requests_planned_total{%s}[$__rate_interval]))%s`, selTCT, byShard), "shard {{shard}} {{target}}"),
						query(fmt.Sprintf(`sum by (target, class) (llmprobe_arrival_rate_requests_per_second{%s})`, selTCTs), "configured {{target}} {{class}}"),
					}},
				{kind: "timeseries", title: "Time to first token: the fleet", unit: unitSeconds,
					description: "TTFT percentiles of every shard's requests together (the native histograms summed over instances), from each request's planned time.",
					queries:     quantiles("llmprobe_time_to_first_token_seconds", selTCT)},
				{kind: "timeseries", title: "Time to first token p95 by shard", unit: unitSeconds,
					description: "Each shard's own TTFT p95: a shard far from the others points at its vantage point (node, zone, network path) or its host.",
					queries: []q{query(fmt.Sprintf(`histogram_quantile(0.95, sum by (job, instance, target) (rate(llmprobe_time_to_first_token_seconds{%s}[$__rate_interval])))%s`, selTCT, byShard),
						"shard {{shard}} {{target}}")}},
				{kind: "stat", title: "Availability, 1h: the fleet", unit: unitRatio, height: 8,
					description: "The availability SLI over the last hour (sent requests the target did not fail; unsent, cancelled, censored and client-side artifacts are no events), every shard's together (the SLI recording rule sums over instances), per region.",
					queries:     []q{query(fmt.Sprintf(`1 - %s{%s}`, recAvailErrors("1h"), selSLI), "{{region}} {{target}} {{class}}").want(ExpectRules)}},
			}},
			{title: "The fleet's ladders", panels: []panel{
				{kind: "stat", title: "Capacity by scope", unit: unitReqPerSec, width: 8, height: 6,
					description: "The last ladder's capacity: scope=fleet from a fleet's coordinator (shard 0 alone publishes it, merged over every shard), scope=local from a prober alone. bound=lower: no valid step above it failed.",
					queries: []q{query(fmt.Sprintf(`max by (target, class, scope, bound) (llmprobe_capacity_requests_per_second{%s})`, selTC),
						"{{target}} {{class}} {{scope}} ({{bound}})").want(ExpectLadder)}},
				{kind: "stat", title: "Last ladder run by scope", unit: unitFromNow, width: 8, height: 6,
					description: "When the last ladder finished: a fleet's (scope=fleet, on shard 0) or a prober's alone (scope=local).",
					queries: []q{query(fmt.Sprintf(`max by (target, scope) (llmprobe_ladder_last_run_timestamp_seconds{%s}) * 1000`, selT),
						"{{target}} {{scope}}").want(ExpectLadder)}},
				{kind: "timeseries", title: "Capacity and knee over time by scope", unit: unitReqPerSec, width: 8, height: 6,
					description: "Capacity and knee of each ladder, by scope.",
					queries: []q{
						query(fmt.Sprintf(`max by (target, class, scope, bound) (llmprobe_capacity_requests_per_second{%s})`, selTC), "capacity {{target}} {{class}} {{scope}} ({{bound}})").want(ExpectLadder),
						query(fmt.Sprintf(`max by (target, class, scope) (llmprobe_ladder_knee_requests_per_second{%s})`, selTC), "knee {{target}} {{class}} {{scope}}").want(ExpectMaybe),
					}},
				{kind: "xychart", title: "Last fleet ladder: TTFT p95 against offered rate", unit: unitSeconds, xUnit: unitReqPerSec,
					description: "One point per step of the last fleet ladder (scope=fleet): the fleet's offered rate (x) and the step's TTFT p95 over every shard's samples, merged exactly (y). Empty without a fleet.",
					queries: []q{
						query(fmt.Sprintf(`llmprobe_ladder_step_offered_rate_requests_per_second{%s, scope="fleet"}`, selTC), "").asInstant().want(ExpectMaybe),
						query(fmt.Sprintf(`llmprobe_ladder_step_ttft_p95_seconds{%s, scope="fleet"}`, selTC), "").asInstant().want(ExpectMaybe),
					}},
				{kind: "xychart", title: "Last fleet ladder: goodput against offered rate", unit: unitReqPerSec, xUnit: unitReqPerSec,
					description: "One point per step of the last fleet ladder (scope=fleet): the fleet's offered rate (x) and its goodput, every shard's good requests together (y). Empty without a fleet.",
					queries: []q{
						query(fmt.Sprintf(`llmprobe_ladder_step_offered_rate_requests_per_second{%s, scope="fleet"}`, selTC), "").asInstant().want(ExpectMaybe),
						query(fmt.Sprintf(`llmprobe_ladder_step_goodput_requests_per_second{%s, scope="fleet"}`, selTC), "").asInstant().want(ExpectMaybe),
					}},
			}},
		},
	}
}
