package probehandler

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/metricdef"
	"github.com/llmprobe/llmprobe/internal/quantile"
)

// The result metrics of one probe (see docs/probe-endpoint.md). With a
// burst, the worst request decides: success only when every request is ok,
// latencies the largest among the ok requests.
const (
	mSuccess    = metricdef.ProbeSuccess
	mDuration   = metricdef.ProbeDuration
	mRequests   = metricdef.ProbeRequests
	mOutcome    = metricdef.ProbeOutcome
	mTTFT       = metricdef.ProbeTTFT
	mE2E        = metricdef.ProbeE2E
	mTokens     = metricdef.ProbeTokens
	mInterChunk = metricdef.ProbeInterChunk
	mLag        = metricdef.ProbeLag
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
	gauge := func(name string, v float64) {
		ms = append(ms, prometheus.MustNewConstMetric(prometheus.NewDesc(name, metricdef.ProbeSpec(name).Help, nil, nil), prometheus.GaugeValue, v))
	}
	b := 0.0
	if r.success() {
		b = 1
	}
	gauge(mSuccess, b)
	gauge(mDuration, r.duration.Seconds())
	gauge(mRequests, float64(r.planned))

	count := map[[2]string]int{}
	for _, rec := range r.records {
		count[[2]string{string(rec.Outcome), string(rec.Reason)}]++
	}
	od := prometheus.NewDesc(mOutcome, metricdef.ProbeSpec(mOutcome).Help, metricdef.ProbeSpec(mOutcome).Labels, nil)
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
		gauge(mTTFT, ttft.Seconds())
	}
	if haveE2E {
		gauge(mE2E, e2e.Seconds())
	}
	if haveTokens {
		gauge(mTokens, float64(tokens))
	}
	if haveLag {
		gauge(mLag, lag.Seconds())
	}
	q := map[float64]float64{}
	p := gaps.Percentiles()
	if p.Count > 0 {
		for _, x := range interChunkQuantiles {
			q[x] = gaps.Quantile(x).Seconds()
		}
	}
	ms = append(ms, prometheus.MustNewConstSummary(prometheus.NewDesc(mInterChunk, metricdef.ProbeSpec(mInterChunk).Help, nil, nil),
		uint64(p.Count), gapSum.Seconds(), q))
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
