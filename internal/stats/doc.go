// Package stats turns a cohort of ledger records into the figures llmprobe
// reports: counts by outcome and reason, percentiles with counts (never
// means), goodput under latency gates, and, on each Summary, the
// generator-validity verdict (internal/verdict) the cohort's evidence
// earns.
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
// Percentiles are read from internal/quantile's distributions: nearest
// rank on the exact sorted samples while a distribution holds at most its
// sample cap, past it a log-bucketed histogram within
// quantile.HistogramRelativeError (Percentiles.Exact tells which applies).
//
// The Accumulator gathers the validity rule's Evidence (dispatch lags
// counted against the configured limit and its hard limit, the in-flight
// cap's unsent arrivals, the rate, the prober host's health) and the
// steady-state evidence of a ladder step; internal/verdict judges them.
// A fleet's shards send their cohorts as ShardSummary, and Merge sums them
// into the Summary one Accumulator would have made of all their records.
package stats
