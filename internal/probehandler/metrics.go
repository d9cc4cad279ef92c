package probehandler

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
)

// The result metrics of one probe (see docs/probe-endpoint.md). With a
// burst, the worst request decides: success only when every request is ok,
// latencies the largest among the ok requests.
const (
	mSuccess    = "probe_success"
	mDuration   = "probe_duration_seconds"
	mRequests   = "probe_llm_requests"
	mOutcome    = "probe_llm_outcome"
	mTTFT       = "probe_llm_time_to_first_token_seconds"
	mE2E        = "probe_llm_e2e_seconds"
	mTokens     = "probe_llm_output_tokens"
	mInterChunk = "probe_llm_inter_chunk_seconds"
	mLag        = "probe_llm_dispatch_lag_seconds"
)

// interChunkQuantiles are the quantiles of probe_llm_inter_chunk_seconds
// (nearest rank, as every llmprobe percentile); 1 is the largest gap.
var interChunkQuantiles = []float64{0.5, 0.9, 0.99, 1}

// success reports whether every planned request ended ok.
func (r result) success() bool {
	if r.planned == 0 || len(r.records) != r.planned {
		return false
	}
	for _, rec := range r.records {
		if rec.Outcome != ledger.OK {
			return false
		}
	}
	return true
}

// registry is the probe's answer: a registry of its own, made for this
// scrape and dropped after it, so nothing of one probe shows in another.
func (r result) registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	var ms constMetrics
	gauge := func(name, help string, v float64) {
		ms = append(ms, prometheus.MustNewConstMetric(prometheus.NewDesc(name, help, nil, nil), prometheus.GaugeValue, v))
	}
	b := 0.0
	if r.success() {
		b = 1
	}
	gauge(mSuccess, "1 when every request of the probe ended ok, else 0.", b)
	gauge(mDuration, "How long the probe took, from the scrape's arrival to its last request's end, in seconds.", r.duration.Seconds())
	gauge(mRequests, "Requests the probe planned: the module's burst.requests (each has one outcome in probe_llm_outcome).", float64(r.planned))

	count := map[[2]string]int{}
	for _, rec := range r.records {
		count[[2]string{string(rec.Outcome), string(rec.Reason)}]++
	}
	od := prometheus.NewDesc(mOutcome, "Requests of the probe that ended with each outcome and reason: the whole closed set, 0 for those not reached.",
		[]string{"outcome", "reason"}, nil)
	for _, o := range ledger.Outcomes {
		for _, rs := range ledger.ReasonsFor(o) {
			ms = append(ms, prometheus.MustNewConstMetric(od, prometheus.GaugeValue, float64(count[[2]string{string(o), string(rs)}]), string(o), string(rs)))
		}
	}

	var ttft, e2e, lag time.Duration
	var haveTTFT, haveE2E, haveLag, haveTokens bool
	tokens := 0
	gaps := quantile.NewDist(0)
	gapSum := time.Duration(0)
	for i := range r.records {
		rec := &r.records[i]
		if d, ok := rec.DispatchLag(); ok {
			lag, haveLag = max(lag, d), true
		}
		if rec.Outcome != ledger.OK {
			continue // failures stay out of the latency figures
		}
		if d, ok := rec.TTFT(); ok {
			ttft, haveTTFT = max(ttft, d), true
		}
		if d, ok := rec.E2E(); ok {
			e2e, haveE2E = max(e2e, d), true
		}
		if rec.Usage.Known {
			tokens, haveTokens = tokens+rec.Usage.Completion, true
		}
		for _, g := range rec.ChunkGaps {
			gaps.Add(g)
			gapSum += g
		}
	}
	if haveTTFT {
		gauge(mTTFT, "Time to first token from the planned send (the record's TTFT boundary), in seconds: the largest among the probe's ok requests; absent when none reached one.", ttft.Seconds())
	}
	if haveE2E {
		gauge(mE2E, "End to end from the planned send to the stream's end, in seconds: the largest among the probe's ok requests; absent when none was ok.", e2e.Seconds())
	}
	if haveTokens {
		gauge(mTokens, "Output tokens the server reported (usage), summed over the probe's ok requests; absent when it reported none.", float64(tokens))
	}
	if haveLag {
		gauge(mLag, "Dispatch lag (sent minus planned), in seconds: the largest among the probe's sent requests; absent when none was sent.", lag.Seconds())
	}
	q := map[float64]float64{}
	p := gaps.Percentiles()
	if p.Count > 0 {
		for _, x := range interChunkQuantiles {
			q[x] = gaps.Quantile(x).Seconds()
		}
	}
	ms = append(ms, prometheus.MustNewConstSummary(prometheus.NewDesc(mInterChunk,
		"Gaps between consecutive content events of the probe's ok requests, in seconds (each request's first gaps, up to the client's bound): nearest-rank quantiles, 1 the largest gap; count 0 when there were none.",
		nil, nil), uint64(p.Count), gapSum.Seconds(), q))
	reg.MustRegister(ms)
	return reg
}

// constMetrics is a collector of metrics made once.
type constMetrics []prometheus.Metric

// Describe implements prometheus.Collector.
func (c constMetrics) Describe(ch chan<- *prometheus.Desc) {
	seen := map[*prometheus.Desc]bool{}
	for _, m := range c {
		if d := m.Desc(); !seen[d] {
			seen[d] = true
			ch <- d
		}
	}
}

// Collect implements prometheus.Collector.
func (c constMetrics) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}
