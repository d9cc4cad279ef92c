package telemetry

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/metricdef"
)

// MetricKind is the Prometheus type of a metric.
type MetricKind string

// The metric types llmprobe exports.
const (
	KindCounter   MetricKind = "counter"
	KindGauge     MetricKind = "gauge"
	KindHistogram MetricKind = "histogram" // native buckets, and classic ones on the same series with Options.ClassicHistograms
	// KindNativeHistogram has native buckets only, whatever
	// telemetry.classic_histograms says: no classic series.
	KindNativeHistogram MetricKind = "native histogram"
)

// MetricSpec describes one llmprobe_* Prometheus metric. The catalog
// (Metrics) is the one place a metric's type, unit, labels and help are
// written, over its name from internal/metricdef (the one source dashgen
// reads too): the collectors are built from it and docs/metrics.md is
// generated from it.
type MetricSpec struct {
	Name string
	Kind MetricKind
	// Unit is what one unit of the value is ("seconds", "requests/s",
	// "requests", "tokens", …); empty for a 0/1 flag or an info series.
	Unit string
	// Labels are the variable labels, in the collector's order. The
	// Recorder's series (all but the llmprobe_ledger_* counters) also carry
	// the constant `region` label when Options.Region is set.
	Labels []string
	Help   string
	// OTel names the OpenTelemetry instrument that carries the same
	// figure, empty when none does.
	OTel string
}

// Metric names, written once in internal/metricdef and used by the
// collectors.
const (
	metricTTFT            = metricdef.TTFT
	metricChunk           = metricdef.Chunk
	metricTPOT            = metricdef.TPOT
	metricDuration        = metricdef.Duration
	metricLag             = metricdef.Lag
	metricPlanned         = metricdef.Planned
	metricDispatched      = metricdef.Dispatched
	metricRequests        = metricdef.Requests
	metricGood            = metricdef.Good
	metricTokens          = metricdef.Tokens
	metricCachedPrompt    = metricdef.CachedPrompt
	metricCacheReported   = metricdef.CacheReported
	metricIdentityChanges = metricdef.IdentityChanges
	metricDropped         = metricdef.Dropped
	metricInFlight        = metricdef.InFlight
	metricOldest          = metricdef.Oldest
	metricArrivalRate     = metricdef.ArrivalRate
	metricGeneratorValid  = metricdef.GeneratorValid
	metricInvalidCause    = metricdef.InvalidCause
	metricLagMax          = metricdef.LagMax
	metricCapacity        = metricdef.Capacity
	metricKnee            = metricdef.Knee
	metricLadderLast      = metricdef.LadderLast
	metricStepRate        = metricdef.StepRate
	metricStepTTFT        = metricdef.StepTTFT
	metricStepGoodput     = metricdef.StepGoodput
	metricStepSaturated   = metricdef.StepSaturated
	metricBudgetTokens    = metricdef.BudgetTokens
	metricBudgetRequests  = metricdef.BudgetRequests
	metricSLOTTFT         = metricdef.SLOTTFT
	metricBuildInfo       = metricdef.BuildInfo
	metricTargetInfo      = metricdef.TargetInfo
	metricLedgerWritten   = metricdef.LedgerWritten
	metricLedgerDropped   = metricdef.LedgerDropped
	metricLedgerWriteErrs = metricdef.LedgerWriteErrs
	metricLedgerRotations = metricdef.LedgerRotations
	metricFleetInfo       = metricdef.FleetInfo
	metricProbeRefused    = metricdef.ProbeRefused
	metricTurnTTFT        = metricdef.TurnTTFT
	metricTurns           = metricdef.Turns
	metricHTTPPhase       = metricdef.HTTPPhase
	metricHTTPConns       = metricdef.HTTPConns
	metricHTTPConnInfo    = metricdef.HTTPConnInfo

	metricHostBusy            = metricdef.HostBusy
	metricHostSteal           = metricdef.HostSteal
	metricHostCPUs            = metricdef.HostCPUs
	metricHostPressure        = metricdef.HostPressure
	metricCgroupPressure      = metricdef.CgroupPressure
	metricCgroupPeriods       = metricdef.CgroupPeriods
	metricCgroupThrottled     = metricdef.CgroupThrottled
	metricCgroupThrottledSecs = metricdef.CgroupThrottledSecs
	metricCgroupQuota         = metricdef.CgroupQuota
	metricRunQueueWait        = metricdef.RunQueueWait
	metricReloadOK            = metricdef.ReloadOK
	metricReloadTime          = metricdef.ReloadTime
)

// Units of the catalog.
const (
	unitSeconds   = "seconds"
	unitRate      = "requests/s"
	unitRequests  = "requests"
	unitTokens    = "tokens"
	unitRecords   = "records"
	unitTimestamp = "seconds since the Unix epoch"
)

// Metrics returns every llmprobe_* Prometheus metric the package exports,
// in the order of docs/metrics.md. The slice is new on every call.
func Metrics() []MetricSpec {
	targetOnly := []string{labelTarget}
	series := []string{labelTarget, labelClass, labelTraffic, labelDuring}
	seriesAnd := func(more ...string) []string { return append(slices.Clone(series), more...) }
	perStep := []string{labelTarget, labelClass, labelStep, labelScope}
	return []MetricSpec{
		// Latency histograms of one (target, class, traffic, during).
		{Name: metricTTFT, Kind: KindHistogram, Unit: unitSeconds, Labels: series, OTel: InstrumentTimeToFirstChunk,
			Help: "Time from the planned send time to the first non-empty visible content, ok requests only."},
		{Name: metricChunk, Kind: KindHistogram, Unit: unitSeconds, Labels: series, OTel: InstrumentTimePerChunk,
			Help: "Each gap between consecutive content-bearing stream events, ok requests only."},
		{Name: metricTPOT, Kind: KindHistogram, Unit: unitSeconds, Labels: series, OTel: InstrumentTimePerToken,
			Help: "(last content - first content) / (server-reported output tokens - 1), ok requests with usage of 2+ output tokens."},
		{Name: metricDuration, Kind: KindHistogram, Unit: unitSeconds, Labels: series, OTel: InstrumentOperationDuration,
			Help: "End to end: stream end minus planned send time, ok requests only."},
		{Name: metricLag, Kind: KindHistogram, Unit: unitSeconds, Labels: series, OTel: InstrumentDispatchLag,
			Help: "Dispatch time minus planned time, every dispatched request."},

		// Multi-turn sessions, by turn index (docs/workloads.md#sessions).
		{Name: metricTurnTTFT, Kind: KindHistogram, Unit: unitSeconds, Labels: []string{labelTarget, labelClass, labelTurn},
			Help: "Sessions: time from a turn's own planned time (the previous turn's end + think time) to its first visible content, ok turns only."},
		{Name: metricTurns, Kind: KindCounter, Unit: unitRequests, Labels: []string{labelTarget, labelClass, labelTurn, labelOutcome},
			Help: "Sessions: turns ended, by turn index and outcome (a turn after a failed one ends unsent, reason session_aborted)."},

		// Answer canaries (docs/checks.md).
		{Name: metricAnswerChecks, Kind: KindCounter, Unit: "checks", Labels: []string{labelTarget, labelClass, labelCheck, labelResult, labelReason}, OTel: InstrumentAnswerChecks,
			Help: "Answer checks run, one per check request finished, by check, result and, on fail, reason: pass, fail (the answer is wrong) or not_judged (the request did not end ok: counted by availability, not correctness). Correctness is pass / (pass + fail). A canary class's checks (at most 32) are created at zero: pass, not_judged and the reasons of their kind."},

		// Counters of the ledger's terminal outcomes.
		{Name: metricPlanned, Kind: KindCounter, Unit: unitRequests, Labels: series,
			Help: "Planned first-attempt arrivals, counted when they reach a terminal outcome."},
		{Name: metricDispatched, Kind: KindCounter, Unit: unitRequests, Labels: series,
			Help: "Requests handed to the transport, counted when they reach a terminal outcome."},
		{Name: metricRequests, Kind: KindCounter, Unit: unitRequests, Labels: seriesAnd(labelOutcome, labelReason), OTel: InstrumentRequests,
			Help: "Terminal outcomes of planned arrivals, by outcome and reason."},
		{Name: metricGood, Kind: KindCounter, Unit: unitRequests, Labels: series, OTel: InstrumentRequestsGood,
			Help: "Requests that were ok and within every gate of their class."},
		{Name: metricTokens, Kind: KindCounter, Unit: unitTokens, Labels: seriesAnd(labelTokenType), OTel: InstrumentTokenUsage,
			Help: "Tokens as reported by the server's usage (never estimated)."},
		{Name: metricCachedPrompt, Kind: KindCounter, Unit: unitTokens, Labels: series,
			Help: "Prompt tokens the server said it served from its prompt (prefix) cache: the usage's cached tokens (OpenAI, Responses, Anthropic cache reads) or llama.cpp's timings.cache_n (ledger Record.CachedPromptTokens). A request whose server said nothing believable adds nothing, here or to " + metricCacheReported + "."},
		{Name: metricCacheReported, Kind: KindCounter, Unit: unitTokens, Labels: series,
			Help: "Prompt tokens of the requests whose cached-token count is known (the denominator of the cached-token fraction: rate(" + metricCachedPrompt + ") / rate(this)); a server that reports no cache count adds to neither, so its fraction is absent, never 0."},
		{Name: metricIdentityChanges, Kind: KindCounter, Unit: "changes", Labels: targetOnly,
			Help: "Times the target's identity (model, version) changed from a previously known value."},
		{Name: metricDropped, Kind: KindCounter, Unit: "values", Labels: []string{labelReason},
			Help: "Values the recorder could not record (label: a label value refused; negative: a negative counter amount; panic: recording failed), never fatal."},

		// The generator's own state.
		{Name: metricInFlight, Kind: KindGauge, Unit: unitRequests, Labels: targetOnly,
			Help: "Requests dispatched and not yet finished."},
		{Name: metricOldest, Kind: KindGauge, Unit: unitSeconds, Labels: targetOnly,
			Help: "Age, from its planned time, of the oldest request in flight (0 when none)."},
		{Name: metricArrivalRate, Kind: KindGauge, Unit: unitRate, Labels: []string{labelTarget, labelClass, labelTraffic},
			Help: "Scheduled arrival rate in requests per second."},
		{Name: metricGeneratorValid, Kind: KindGauge, Labels: targetOnly,
			Help: "1 when the load generator kept its schedule over the last minute (dispatches later than the target's max_lag_p99 not significantly above 1 %, none beyond lag_hard_factor times it, no arrival unsent at the in-flight cap), else 0; once 0, 1 again only after a clean minute. It judges the prober, not the target."},
		{Name: metricInvalidCause, Kind: KindGauge, Labels: []string{labelTarget, labelCause},
			Help: "1 for each cause of the current invalid generator verdict (" + cause.Join(cause.Generator) + "), else 0."},
		{Name: metricLagMax, Kind: KindGauge, Unit: unitSeconds, Labels: targetOnly,
			Help: "Largest dispatch lag over the last minute (0 when nothing was dispatched)."},

		// Capacity and the last ladder.
		{Name: metricCapacity, Kind: KindGauge, Unit: unitRate, Labels: []string{labelTarget, labelClass, labelBound, labelScope},
			Help: "Capacity of the class from the last ladder: the class's offered rate at the highest valid step where its good fraction reached the target. bound=\"measured\": a valid step above failed; bound=\"lower\": none did, the capacity is at least this."},
		{Name: metricKnee, Kind: KindGauge, Unit: unitRate, Labels: []string{labelTarget, labelClass, labelScope},
			Help: "The class's offered rate at the last ladder's knee: the first valid step whose TTFT p95 for the class exceeds the knee factor times its lowest valid step's."},
		{Name: metricLadderIdentity, Kind: KindGauge, Labels: []string{labelTarget, "model", "version", labelComplete, labelScope},
			Help: "The identity the last ladder (its capacity and knee) was measured on: the target's model and version when it began; always 1. complete=\"false\": a deploy or restart cut it, its capacity is a lower bound of that identity, or no step judged the target (every step invalid or empty; docs/ladder.md)."},
		{Name: metricLadderLast, Kind: KindGauge, Unit: unitTimestamp, Labels: []string{labelTarget, labelScope},
			Help: "Unix time the last ladder finished."},
		{Name: metricStepRate, Kind: KindGauge, Unit: unitRate, Labels: perStep,
			Help: "The class's offered rate at each step of the last ladder (step rate × the class's weight share), requests per second."},
		{Name: metricStepTTFT, Kind: KindGauge, Unit: unitSeconds, Labels: perStep,
			Help: "TTFT p95 of the class's ok requests at each step of the last ladder."},
		{Name: metricStepGoodput, Kind: KindGauge, Unit: unitRate, Labels: perStep,
			Help: "The class's good requests per second at each step of the last ladder."},
		{Name: metricStepSaturated, Kind: KindGauge, Labels: perStep,
			Help: "1 when the step of the last ladder was judged saturated (its backlog grew or its TTFT climbed through the step: never the capacity), 0 when judged steady; absent when not judged."},

		// Budgets, gates and identity.
		{Name: metricBudgetTokens, Kind: KindGauge, Unit: unitTokens, Labels: targetOnly,
			Help: "Tokens left in today's budget (absent when unlimited)."},
		{Name: metricBudgetRequests, Kind: KindGauge, Unit: unitRequests, Labels: targetOnly,
			Help: "Requests left in today's budget (absent when unlimited)."},
		{Name: metricSLOTTFT, Kind: KindGauge, Unit: unitSeconds, Labels: []string{labelTarget, labelClass},
			Help: "The class's TTFT gate, for alerting rules."},
		{Name: metricBuildInfo, Kind: KindGauge, Labels: []string{"version", "revision", "goversion"},
			Help: "Build information; always 1."},
		{Name: metricTargetInfo, Kind: KindGauge, Labels: []string{labelTarget, "model", "version"},
			Help: "Target identity as last seen; always 1."},
		{Name: metricFleetInfo, Kind: KindGauge, Labels: []string{labelShard, labelShards},
			Help: "This prober's place in its fleet (shard 0 of 1 when alone); always 1. Join it on instance to label a prober's series by shard."},

		// The path to the model: each attempt's connection (phases.go).
		{Name: metricHTTPPhase, Kind: KindNativeHistogram, Unit: unitSeconds, Labels: []string{labelTarget, labelPhase}, OTel: InstrumentHTTPPhase,
			Help: "Each attempt's phases, every class and traffic together: a new connection's resolve, connect and tls; then write (connection in hand to request written), processing (request written to response headers), first_byte (headers to first body byte) and first_content (first body byte to first content). A reused connection has no resolve, connect or tls observation. Native buckets only."},
		{Name: metricHTTPConns, Kind: KindCounter, Unit: unitRequests, Labels: []string{labelTarget, labelReused}, OTel: InstrumentHTTPConnections,
			Help: "Attempts by their connection: new (reused=false) or taken from the keep-alive pool (reused=true)."},
		{Name: metricHTTPConnInfo, Kind: KindGauge, Labels: []string{labelTarget, labelHTTPVersion, labelTLSVersion, labelTLSCipher, labelALPN},
			Help: "The HTTP version and TLS of the target's last response (closed sets, never the server's text); always 1."},

		// The JSONL ledger sink (registered by WatchLedgerSink).
		{Name: metricLedgerWritten, Kind: KindCounter, Unit: unitRecords,
			Help: "Ledger records written to the JSONL file buffer."},
		{Name: metricLedgerDropped, Kind: KindCounter, Unit: unitRecords,
			Help: "Ledger records not written (queue full, write error, after close)."},
		{Name: metricLedgerWriteErrs, Kind: KindCounter, Unit: "errors",
			Help: "Failed writes, flushes, opens or rotations of the JSONL ledger."},
		{Name: metricLedgerRotations, Kind: KindCounter, Unit: "rotations",
			Help: "JSONL ledger files rotated."},

		// The prober host's CPU (registered by WatchHost; read at scrape
		// time; absent where the platform or the cgroup does not expose
		// them). What tells a starved prober from a slow target.
		{Name: metricHostBusy, Kind: KindCounter, Unit: unitSeconds,
			Help: "CPU time the prober's host spent busy (all but idle and iowait), over all its CPUs (/proc/stat); rate() divided by llmprobe_host_cpus is its busy share."},
		{Name: metricHostSteal, Kind: KindCounter, Unit: unitSeconds,
			Help: "CPU time stolen from the prober's host by its hypervisor, over all its CPUs (/proc/stat)."},
		{Name: metricHostCPUs, Kind: KindGauge, Unit: "cpus",
			Help: "CPUs of the prober's host (/proc/stat)."},
		{Name: metricHostPressure, Kind: KindCounter, Unit: unitSeconds,
			Help: "Host CPU pressure: time in which at least one runnable task on the prober's host waited for a CPU (/proc/pressure/cpu, some total); rate() is the share of time stalled."},
		{Name: metricCgroupPressure, Kind: KindCounter, Unit: unitSeconds,
			Help: "CPU pressure of the prober's own cgroup v2 (cpu.pressure, some total); absent in the root cgroup or without cgroup v2."},
		{Name: metricCgroupPeriods, Kind: KindCounter, Unit: "periods",
			Help: "CPU quota enforcement periods of the prober's cgroup with runnable tasks (cpu.stat nr_periods, cgroup v1 cpu controller or v2)."},
		{Name: metricCgroupThrottled, Kind: KindCounter, Unit: "periods",
			Help: "Periods in which the prober's cgroup ran out of its CPU quota and was throttled (cpu.stat nr_throttled)."},
		{Name: metricCgroupThrottledSecs, Kind: KindCounter, Unit: unitSeconds,
			Help: "Time the prober cgroup's tasks were held back by its CPU quota (cpu.stat throttled_time or throttled_usec)."},
		{Name: metricCgroupQuota, Kind: KindGauge, Unit: "cpus",
			Help: "CPU limit of the prober's cgroup in CPUs (cpu.max or cpu.cfs_quota_us / cpu.cfs_period_us); absent without a quota."},
		{Name: metricRunQueueWait, Kind: KindCounter, Unit: unitSeconds,
			Help: "Time the prober's threads were runnable but waiting for a CPU, summed over threads (/proc/self/task/*/schedstat)."},

		// The path to the model (path.go): a buffering intermediary, the
		// server's certificates.
		pathSpecs()[0], pathSpecs()[1], pathSpecs()[2], pathSpecs()[3],
		// The /probe endpoint (registered by the daemon, proberefused.go).
		{Name: metricProbeRefused, Kind: KindCounter, Unit: "scrapes", Labels: []string{labelReason},
			Help: "/probe scrapes refused before anything was sent (no probe_* series answered), by reason: " + probeRefusedList + "."},
		// The daemon's configuration (registered by NewConfigReload).
		{Name: metricReloadOK, Kind: KindGauge,
			Help: "Whether the last configuration load (at start, SIGHUP or POST /-/reload) succeeded: 1, or 0 while a refused one left the previous configuration running."},
		{Name: metricReloadTime, Kind: KindGauge, Unit: unitSeconds,
			Help: "Unix time of the last successful configuration load."},
		// Targets from files (registered by NewTargetFiles, targetfiles.go).
		{Name: metricTargetLabels, Kind: KindGauge, Labels: []string{labelTarget},
			Help: "A target's constant labels (its file_sd entry's labels but name and model, or its block's labels), beside target; always 1. Join: … * on(target) group_left(team) llmprobe_target_labels."},
		{Name: metricTargetFileChanges, Kind: KindCounter, Unit: "changes", Labels: []string{labelResult},
			Help: "Changes to the target_files files seen by the poller, by result: applied (the configuration reloaded) or refused (the last good targets keep running; the log says why)."},
		{Name: metricTargetFileTargets, Kind: KindGauge, Unit: "targets",
			Help: "Targets taken from target_files in the running configuration."},
		// The prober's ladder queue (registered by WatchLadderTurns, ladderturns.go).
		{Name: metricLaddersRunning, Kind: KindGauge, Unit: "ladders",
			Help: "Ladders running now on this prober: at most limits.max_concurrent_ladders (a reload that lowers it lets the running finish)."},
		{Name: metricLaddersWaiting, Kind: KindGauge, Unit: "ladders",
			Help: "Ladders due but waiting their turn (limits.max_concurrent_ladders), in the order they fell due; each target's card says how many are ahead of it."},
	}
}

// spec returns the catalog entry of name. An unknown name is a programming
// error, caught by every test that builds a Recorder.
func spec(name string) MetricSpec {
	for _, m := range Metrics() {
		if m.Name == name {
			return m
		}
	}
	panic(fmt.Sprintf("telemetry: metric %q is not in the catalog", name))
}

// LabelSpec describes one label of the catalog's metrics.
type LabelSpec struct {
	Name    string
	Meaning string
	// Values is the closed set of values, empty when the values come from
	// the configuration (target and class names) or the server.
	Values []string
}

// Labels returns the labels of the catalog's metrics, in the order of
// docs/metrics.md. The slice is new on every call.
func Labels() []LabelSpec {
	var reasons []string
	for _, o := range ledger.Outcomes {
		for _, r := range ledger.ReasonsFor(o) {
			if !slices.Contains(reasons, string(r)) {
				reasons = append(reasons, string(r))
			}
		}
	}
	return []LabelSpec{
		{Name: labelTarget, Meaning: "The target's name from the configuration."},
		{Name: labelClass, Meaning: "The workload class's name from the configuration."},
		{Name: labelTraffic, Meaning: "Which load produced the request: a one-shot probe, the daemon's baseline or a ladder step.",
			Values: []string{string(ledger.TrafficProbe), string(ledger.TrafficBaseline), string(ledger.TrafficLadder)}},
		{Name: labelDuring, Meaning: "Whether a ladder was running on the target when the request was planned.",
			Values: valuesOf(ledger.DuringValues, ledger.During.Label)},
		{Name: labelOutcome, Meaning: "The request's terminal outcome in the ledger.",
			Values: valuesOf(ledger.Outcomes, func(o ledger.Outcome) string { return string(o) })},
		{Name: labelReason, Meaning: "On llmprobe_requests_total: the reason of the outcome (each outcome has its own set). On llmprobe_telemetry_dropped_total: why a value was not recorded (" + DropLabel + ", " + DropNegative + ", " + DropPanic + "). On llmprobe_probe_refused_total: why /probe refused a scrape (" + probeRefusedList + "). On llmprobe_answer_checks_total: why a check failed (absent unless result is fail).",
			Values: append(reasons, valuesOf(answercheck.Reasons(), func(r answercheck.Reason) string { return string(r) })...)},
		{Name: labelTokenType, Meaning: "Which side of the server's usage the tokens are.", Values: []string{tokenTypeInput, tokenTypeOutput}},
		{Name: labelCause, Meaning: "A cause of an invalid generator verdict.",
			Values: valuesOf(cause.Generator, func(c cause.Cause) string { return string(c) })},
		{Name: labelBound, Meaning: "Whether the capacity was measured (a valid step above it failed) or is a lower bound (none did).",
			Values: []string{string(ladderresult.BoundMeasured), string(ladderresult.BoundLower)}},
		{Name: labelStep, Meaning: "The 1-based step of the last ladder."},
		{Name: labelTurn, Meaning: "A session's 1-based turn index (at most " + strconv.Itoa(MaxTurnLabel) + ", the bound on classes[].session.turns)."},
		{Name: labelScope, Meaning: "Whose ladder a capacity, knee or step figure is: one prober's (local), or a fleet's, merged over every shard and published by its coordinator, shard 0, alone (fleet); see docs/fleet.md.",
			Values: []string{ScopeLocal, ScopeFleet}},
		{Name: labelShard, Meaning: "On llmprobe_fleet_info: this prober's shard index (0 is the fleet's coordinator)."},
		{Name: labelShards, Meaning: "On llmprobe_fleet_info: how many shards the fleet has (1: a prober alone)."},
		{Name: labelPhase, Meaning: "A phase of an attempt on llmprobe_http_phase_seconds (docs/ledger.md#phases).",
			Values: valuesOf(ledger.Phases, func(p ledger.Phase) string { return string(p) })},
		{Name: labelReused, Meaning: "Whether the attempt's connection was taken from the keep-alive pool.", Values: []string{"false", "true"}},
		{Name: labelHTTPVersion, Meaning: "The HTTP version of the target's last response.", Values: ledger.HTTPVersions},
		{Name: labelTLSVersion, Meaning: "The TLS version of the connection (none: plain HTTP).", Values: append(slices.Clone(ledger.TLSVersions), noTLS)},
		{Name: labelTLSCipher, Meaning: "Go's name of the connection's cipher suite (crypto/tls; other: one Go does not name; none: plain HTTP)."},
		{Name: labelALPN, Meaning: "The protocol negotiated by ALPN (none: none negotiated, or plain HTTP).", Values: ledger.ALPNs},
		{Name: "model", Meaning: "The model the target names (server-supplied, sanitised, at most 128 bytes)."},
		{Name: labelComplete, Meaning: "On llmprobe_ladder_identity_info: whether the last ladder measured one identity throughout and judged it (true), or a deploy or restart cut it, or no step judged the target (false).",
			Values: []string{"true", "false"}},
		{Name: "version", Meaning: "On llmprobe_target_info and llmprobe_ladder_identity_info: the version the target reports (server-supplied, sanitised, at most 128 bytes). On llmprobe_build_info: llmprobe's version."},
		{Name: "revision", Meaning: "The VCS revision llmprobe was built from."},
		{Name: "goversion", Meaning: "The Go version llmprobe was built with."},
		{Name: labelResult, Meaning: "On llmprobe_target_files_changes_total: whether a change to the target files was applied or refused. On llmprobe_answer_checks_total: the check's result, pass, fail or not_judged.",
			Values: append([]string{ResultApplied, ResultRefused}, valuesOf(answercheck.Results(), func(r answercheck.Result) string { return string(r) })...)},
		{Name: labelCheck, Meaning: "On llmprobe_answer_checks_total: the check's name from the configuration (classes[].checks[].name, unique in its class)."},
		{Name: "region", Meaning: "A constant label on every series of the recorder (every metric here but the llmprobe_ledger_*, llmprobe_host_*, llmprobe_cgroup_* and llmprobe_run_queue_wait_seconds_total series; the llmprobe_config_* gauges carry it too) when a region is configured (one prober per region); absent otherwise."},
	}
}

// valuesOf is the label value of each of xs, in order.
func valuesOf[T any](xs []T, value func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = value(x)
	}
	return out
}
