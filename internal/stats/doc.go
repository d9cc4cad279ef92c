// Package stats turns a cohort of ledger records into the figures llmprobe
// reports: counts by outcome and reason, percentiles with counts (never
// means), goodput under latency gates, and the generator-validity verdict.
//
// It is pure: no I/O, no clock. Records are fed one by one to an Accumulator
// (which is also a ledger.Sink) or summarised in one call with Summarize.
//
// Every latency is a difference of ledger offsets, taken from the planned
// send time unless its name says otherwise (TTFTFromDispatch). Per-attempt
// figures run from the attempt's own planned time; ArrivalTTFT, ArrivalE2E
// and the gates run from the arrival's first planned time, so retries hide
// no waiting. Retries belong to their arrival's window, count as attempts,
// never as demand, and the achieved rate counts first attempts only. Success
// figures (TTFT, TTFR, inter-chunk, TPOT, e2e) are over ok records only;
// rejections' response times and censored ages are kept in their own
// distributions and never mixed into success figures.
//
// Percentiles use the nearest-rank definition on the exact sorted samples
// while a distribution holds at most its sample cap (DefaultSampleCap per
// figure); past the cap it switches to a log-bucketed histogram whose
// quantiles are within HistogramRelativeError of the exact value (count and
// max stay exact). Percentiles.Exact tells which applies.
//
// The generator-validity rule is one function, ValidityConfig.Judge: a
// cohort's Accumulator and the daemon's LiveValidity window both feed it
// Evidence (exact counts of dispatch lags above the configured limit and
// above its hard limit, judged by a one-sided binomial test against 1 %:
// LagSignificant; the in-flight cap's unsent arrivals, the rate, the
// prober host's health), and it names each cause of an invalid verdict
// with what to do. LiveValidity holds an invalid verdict until a clean
// window. It judges the
// prober, never the target. Ladder capacity and knee (Judge, JudgeClass,
// JudgeLadder) use valid steps only, and say when a capacity is only a
// lower bound.
//
// LadderResult is the one model of a finished ladder and its verdicts:
// the ladder runner produces it, the fleet coordinator judges its merged
// steps into it, internal/report renders it, and its JSON (ladderjson.go,
// LadderSchemaVersion) is what the history file stores and `ladder --json`
// prints. Older flat history lines still decode (ladderlegacy.go).
//
// Rolling keeps a target's recent baseline figures (latency percentiles
// with counts, availability and latency SLI counts, the baseline during
// ladders apart) over sliding windows up to an hour, in one-minute slots of
// bounded histograms, for the daemon's status page; the caller gives it
// the time.
package stats
