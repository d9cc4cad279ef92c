package telemetry

import (
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// Native histogram settings shared by every histogram: buckets grow by at
// most 10%, at most 160 buckets are kept (the resolution is halved beyond
// that), and a histogram is reset at most once an hour to regain resolution.
const (
	nativeBucketFactor    = 1.1
	nativeMaxBuckets      = 160
	nativeMinResetPeriod  = time.Hour
	nativeMaxExemplars    = 10
	labelTarget           = "target"
	labelClass            = "class"
	labelTraffic          = "traffic"
	labelDuring           = "during"
	labelOutcome          = "outcome"
	labelReason           = "reason"
	labelStep             = "step"
	labelBound            = "bound"
	labelCause            = "cause"
	exemplarRequestID     = "request_id"
	exemplarTraceID       = "trace_id"
	tokenTypeInput        = "input"
	tokenTypeOutput       = "output"
	metricNamespacePrefix = "llmprobe_"
)

// Classic bucket boundaries, kept beside the native buckets so a scrape
// without native histogram support still gets usable quantiles.
var (
	bucketsTTFT     = []float64{0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 60}
	bucketsChunk    = []float64{0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5}
	bucketsDuration = []float64{0.1, 0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600}
	bucketsLag      = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

// Gates are a class's service-level gates (zero disables a gate). The rule
// deciding "good" is stats.IsGood, shared with reports and ladders, so the
// good counter and the reports cannot disagree.
type Gates = stats.Gates

// BuildInfo identifies the running binary in llmprobe_build_info.
type BuildInfo struct {
	Version, Revision, GoVersion string
}

// LadderStep is one step of the last ladder run, for the per-step gauges.
type LadderStep struct {
	Step        int           // 1-based
	OfferedRate float64       // planned arrivals per second
	TTFTP95     time.Duration // p95 TTFT of the step's ok requests; 0 = none
	Goodput     float64       // good requests per second
}

// promMetrics holds every Prometheus collector of one Recorder.
type promMetrics struct {
	ttft, chunk, tpot, duration, lag *prometheus.HistogramVec

	planned, dispatched, requests, good, tokens *prometheus.CounterVec
	identityChanges, dropped                    *prometheus.CounterVec

	inFlight, oldest, arrivalRate, generatorValid, invalidCause  *prometheus.GaugeVec
	lagMax                                                       *prometheus.GaugeVec
	capacity, knee, ladderLast                                   *prometheus.GaugeVec
	stepRate, stepTTFT, stepGoodput                              *prometheus.GaugeVec
	budgetTokens, budgetRequests, sloTTFT, buildInfo, targetInfo *prometheus.GaugeVec
}

func histogram(name, help string, buckets []float64) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:                            name,
		Help:                            help,
		Buckets:                         buckets,
		NativeHistogramBucketFactor:     nativeBucketFactor,
		NativeHistogramMaxBucketNumber:  nativeMaxBuckets,
		NativeHistogramMinResetDuration: nativeMinResetPeriod,
		NativeHistogramMaxExemplars:     nativeMaxExemplars,
	}, []string{labelTarget, labelClass, labelTraffic, labelDuring})
}

func gauge(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

func counter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func newPromMetrics() *promMetrics {
	series := []string{labelTarget, labelClass, labelTraffic, labelDuring}
	return &promMetrics{
		ttft: histogram("llmprobe_time_to_first_token_seconds",
			"Time from the planned send time to the first non-empty visible content, ok requests only.", bucketsTTFT),
		chunk: histogram("llmprobe_inter_chunk_latency_seconds",
			"Each gap between consecutive content-bearing stream events, ok requests only.", bucketsChunk),
		tpot: histogram("llmprobe_time_per_output_token_seconds",
			"(last content - first content) / (server-reported output tokens - 1), ok requests with usage of 2+ output tokens.", bucketsChunk),
		duration: histogram("llmprobe_request_duration_seconds",
			"End to end: stream end minus planned send time, ok requests only.", bucketsDuration),
		lag: histogram("llmprobe_dispatch_lag_seconds",
			"Dispatch time minus planned time, every dispatched request.", bucketsLag),

		planned:    counter("llmprobe_requests_planned_total", "Planned first-attempt arrivals, counted when they reach a terminal outcome.", series...),
		dispatched: counter("llmprobe_requests_dispatched_total", "Requests handed to the transport, counted when they reach a terminal outcome.", series...),
		requests: counter("llmprobe_requests_total", "Terminal outcomes of planned arrivals, by outcome and reason.",
			labelTarget, labelClass, labelTraffic, labelDuring, labelOutcome, labelReason),
		good:   counter("llmprobe_requests_good_total", "Requests that were ok and within every gate of their class.", series...),
		tokens: counter("llmprobe_tokens_total", "Tokens as reported by the server's usage (never estimated).", labelTarget, labelClass, labelTraffic, labelDuring, "type"),
		identityChanges: counter("llmprobe_target_identity_changes_total",
			"Times the target's identity (model, version) changed from a previously known value.", labelTarget),
		dropped: counter("llmprobe_telemetry_dropped_total",
			"Values the recorder could not record (label: a label value refused; negative: a negative counter amount; panic: recording failed), never fatal.", labelReason),

		inFlight:       gauge("llmprobe_in_flight_requests", "Requests dispatched and not yet finished.", labelTarget),
		oldest:         gauge("llmprobe_oldest_in_flight_seconds", "Age, from its planned time, of the oldest request in flight (0 when none).", labelTarget),
		arrivalRate:    gauge("llmprobe_arrival_rate", "Scheduled arrival rate in requests per second.", labelTarget, labelClass, labelTraffic),
		generatorValid: gauge("llmprobe_generator_valid", "1 when the load generator kept its schedule over the last minute (dispatch-lag p99 within the target's max_lag_p99, no arrival unsent at the in-flight cap), else 0. It judges the prober, not the target.", labelTarget),
		invalidCause: gauge("llmprobe_generator_invalid_cause",
			"1 for each cause of the current invalid generator verdict (host_starved, dispatch_lag, in_flight_cap, rate_not_reached), else 0.", labelTarget, labelCause),
		lagMax: gauge("llmprobe_dispatch_lag_max_seconds", "Largest dispatch lag over the last minute (0 when nothing was dispatched).", labelTarget),
		capacity: gauge("llmprobe_capacity_requests_per_second",
			"Capacity of the class from the last ladder: the class's offered rate at the highest valid step where its good fraction reached the target. bound=\"measured\": a valid step above failed; bound=\"lower\": none did, the capacity is at least this.",
			labelTarget, labelClass, labelBound),
		knee:           gauge("llmprobe_ladder_knee_requests_per_second", "The class's offered rate at the last ladder's knee: the first valid step whose TTFT p95 for the class exceeds the knee factor times its lowest valid step's.", labelTarget, labelClass),
		ladderLast:     gauge("llmprobe_ladder_last_run_timestamp_seconds", "Unix time the last ladder finished.", labelTarget),
		stepRate:       gauge("llmprobe_ladder_step_offered_rate", "The class's offered rate at each step of the last ladder (step rate × the class's weight share), requests per second.", labelTarget, labelClass, labelStep),
		stepTTFT:       gauge("llmprobe_ladder_step_ttft_p95_seconds", "TTFT p95 of the class's ok requests at each step of the last ladder.", labelTarget, labelClass, labelStep),
		stepGoodput:    gauge("llmprobe_ladder_step_goodput_requests_per_second", "The class's good requests per second at each step of the last ladder.", labelTarget, labelClass, labelStep),
		budgetTokens:   gauge("llmprobe_budget_remaining_tokens", "Tokens left in today's budget (absent when unlimited).", labelTarget),
		budgetRequests: gauge("llmprobe_budget_remaining_requests", "Requests left in today's budget (absent when unlimited).", labelTarget),
		sloTTFT:        gauge("llmprobe_slo_ttft_seconds", "The class's TTFT gate, for alerting rules.", labelTarget, labelClass),
		buildInfo:      gauge("llmprobe_build_info", "Build information; always 1.", "version", "revision", "goversion"),
		targetInfo:     gauge("llmprobe_target_info", "Target identity as last seen; always 1.", labelTarget, "model", "version"),
	}
}

func (m *promMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.ttft, m.chunk, m.tpot, m.duration, m.lag,
		m.planned, m.dispatched, m.requests, m.good, m.tokens, m.identityChanges, m.dropped,
		m.inFlight, m.oldest, m.arrivalRate, m.generatorValid, m.invalidCause, m.lagMax, m.capacity, m.knee, m.ladderLast,
		m.stepRate, m.stepTTFT, m.stepGoodput, m.budgetTokens, m.budgetRequests, m.sloTTFT,
		m.buildInfo, m.targetInfo,
	}
}

// perTarget lists the vectors that carry a target label, for ForgetTarget.
func (m *promMetrics) perTarget() []interface {
	DeletePartialMatch(prometheus.Labels) int
} {
	return []interface {
		DeletePartialMatch(prometheus.Labels) int
	}{
		m.ttft, m.chunk, m.tpot, m.duration, m.lag,
		m.planned, m.dispatched, m.requests, m.good, m.tokens, m.identityChanges,
		m.inFlight, m.oldest, m.arrivalRate, m.generatorValid, m.invalidCause, m.lagMax, m.capacity, m.knee, m.ladderLast,
		m.stepRate, m.stepTTFT, m.stepGoodput, m.budgetTokens, m.budgetRequests, m.sloTTFT, m.targetInfo,
	}
}

// reqKey is one (outcome, reason) pair of llmprobe_requests_total.
type reqKey struct {
	outcome ledger.Outcome
	reason  ledger.Reason
}

// promSeries holds the children of one (target, class, traffic), resolved
// once so that recording a request does no label hashing.
type promSeries struct {
	planned, dispatched, good, tokensIn, tokensOut prometheus.Counter
	ttft, chunk, tpot, duration, lag               prometheus.Observer
	requests                                       map[reqKey]prometheus.Counter
}

// initSeries creates every series of (target, class, traffic, during) at zero, so
// that rates exist before the first event: every valid outcome/reason pair,
// both token types, and the histograms. It returns their children.
func (m *promMetrics) initSeries(target, class string, traffic ledger.Traffic, during string) *promSeries {
	t := string(traffic)
	s := &promSeries{
		planned:    m.planned.WithLabelValues(target, class, t, during),
		dispatched: m.dispatched.WithLabelValues(target, class, t, during),
		good:       m.good.WithLabelValues(target, class, t, during),
		tokensIn:   m.tokens.WithLabelValues(target, class, t, during, tokenTypeInput),
		tokensOut:  m.tokens.WithLabelValues(target, class, t, during, tokenTypeOutput),
		ttft:       m.ttft.WithLabelValues(target, class, t, during),
		chunk:      m.chunk.WithLabelValues(target, class, t, during),
		tpot:       m.tpot.WithLabelValues(target, class, t, during),
		duration:   m.duration.WithLabelValues(target, class, t, during),
		lag:        m.lag.WithLabelValues(target, class, t, during),
		requests:   map[reqKey]prometheus.Counter{},
	}
	for _, o := range ledger.Outcomes {
		for _, r := range ledger.ReasonsFor(o) {
			s.requests[reqKey{o, r}] = m.requests.WithLabelValues(target, class, t, during, string(o), string(r))
		}
	}
	return s
}

func observe(h prometheus.Observer, d time.Duration, ex prometheus.Labels) {
	if eo, ok := h.(prometheus.ExemplarObserver); ok && ex != nil {
		eo.ObserveWithExemplar(d.Seconds(), ex)
		return
	}
	h.Observe(d.Seconds())
}

// record feeds one finished record into the Prometheus collectors through
// the children of its series; what cannot be recorded goes to drop.
func (m *promMetrics) record(s *promSeries, r *ledger.Record, good bool, drop func(reason, what string, err error)) {
	ex := prometheus.Labels{exemplarRequestID: strconv.FormatUint(r.ID, 10)}
	if r.TraceID != "" {
		ex[exemplarTraceID] = r.TraceID
	}
	if r.Attempt <= 1 {
		s.planned.Inc()
	}
	req := s.requests[reqKey{r.Outcome, r.Reason}]
	if req == nil { // a pair outside the closed set still counts
		var err error
		if req, err = m.requests.GetMetricWithLabelValues(r.Target, r.Class, string(r.Traffic), r.DuringLabel(), string(r.Outcome), string(r.Reason)); err != nil {
			drop(DropLabel, "llmprobe_requests_total", err)
		}
	}
	if req != nil {
		req.Inc()
	}
	if lag, ok := r.DispatchLag(); ok {
		s.dispatched.Inc()
		observe(s.lag, lag, ex)
	}
	if r.Usage.Known {
		// Counts are checked where they are decoded (ledger.CheckUsage);
		// a record built elsewhere gets the same guard here.
		for _, x := range []struct {
			c prometheus.Counter
			n int
		}{{s.tokensIn, r.Usage.Prompt}, {s.tokensOut, r.Usage.Completion}} {
			if x.n < 0 {
				drop(DropNegative, "llmprobe_tokens_total", fmt.Errorf("token count %d", x.n))
				continue
			}
			x.c.Add(float64(x.n))
		}
	}
	if r.Outcome != ledger.OK {
		return
	}
	if good {
		s.good.Inc()
	}
	if v, ok := r.TTFT(); ok {
		observe(s.ttft, v, ex)
	}
	if v, ok := r.E2E(); ok {
		observe(s.duration, v, ex)
	}
	if v, ok := r.TPOT(); ok {
		observe(s.tpot, v, ex)
	}
	for i, g := range r.ChunkGaps {
		if i == 0 { // one exemplar per request is plenty
			observe(s.chunk, g, ex)
			continue
		}
		s.chunk.Observe(g.Seconds())
	}
}

// NewRegistry returns a fresh registry holding the Go and process
// collectors (never the global default registry). The Go collector adds
// the scheduler latency histogram, go_sched_latencies_seconds (how long
// runnable goroutines waited for a CPU): with process_cpu_seconds_total it
// tells a starved prober host from a slow target.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/sched/latencies:seconds$`)})),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

func defaultBuildInfo(b BuildInfo) BuildInfo {
	if b.GoVersion == "" {
		b.GoVersion = runtime.Version()
	}
	if b.Version == "" {
		b.Version = "unknown"
	}
	if b.Revision == "" {
		b.Revision = "unknown"
	}
	return b
}
