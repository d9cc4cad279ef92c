package telemetry

import (
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"sync"
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
	nativeBucketFactor   = 1.1
	nativeMaxBuckets     = 160
	nativeMinResetPeriod = time.Hour
	// DefaultExemplars is the exemplars a latency histogram keeps when
	// Options.Exemplars is 0 (config.DefaultExemplars argues the number).
	DefaultExemplars      = 4
	labelTarget           = "target"
	labelClass            = "class"
	labelTraffic          = "traffic"
	labelDuring           = "during"
	labelOutcome          = "outcome"
	labelReason           = "reason"
	labelStep             = "step"
	labelTurn             = "turn"
	labelBound            = "bound"
	labelScope            = "scope"
	labelShard            = "shard"
	labelShards           = "shards"
	labelCause            = "cause"
	labelTokenType        = "type"
	exemplarRequestID     = "request_id"
	exemplarTraceID       = "trace_id"
	tokenTypeInput        = "input"
	tokenTypeOutput       = "output"
	metricNamespacePrefix = "llmprobe_"
)

// Classic bucket boundaries, exposed beside the native buckets when
// Options.ClassicHistograms is set, so a scrape without native histogram
// support still gets usable quantiles.
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
	// Saturated is the step's steady-state verdict: 1 saturated, 0
	// steady, -1 not judged (no series).
	Saturated int
}

// promMetrics holds every Prometheus collector of one Recorder.
type promMetrics struct {
	exemplars bool // observations carry exemplars (Options.Exemplars is not negative)

	ttft, chunk, tpot, duration, lag *histVec

	planned, dispatched, requests, good, tokens *prometheus.CounterVec
	cachedPrompt, cacheReported                 *prometheus.CounterVec
	identityChanges, dropped                    *prometheus.CounterVec

	inFlight, oldest, arrivalRate, generatorValid, invalidCause  *prometheus.GaugeVec
	lagMax                                                       *prometheus.GaugeVec
	capacity, knee, ladderLast                                   *prometheus.GaugeVec
	stepRate, stepTTFT, stepGoodput, stepSaturated               *prometheus.GaugeVec
	budgetTokens, budgetRequests, sloTTFT, buildInfo, targetInfo *prometheus.GaugeVec
	fleetInfo                                                    *prometheus.GaugeVec
	ladderIdentity                                               *prometheus.GaugeVec
	turnTTFT                                                     *histVec
	turns, answerChecks                                          *prometheus.CounterVec
	path                                                         pathMetrics // path.go
}

// histogram, gauge and counter build the collector of a catalog entry
// (name, help and labels from Metrics). A histogram has native buckets,
// and the classic buckets given beside them when classic is set (with
// none given and native buckets on, client_golang keeps no classic ones).
func histogram(name string, buckets []float64, classic bool, exemplars int) *histVec {
	m := spec(name)
	if !classic {
		buckets = nil
	}
	return newHistVec(histOpts{name: m.Name, help: m.Help, labels: m.Labels, classic: buckets, exemplars: exemplars,
		maxBuckets: nativeMaxBuckets, minReset: nativeMinResetPeriod})
}

func gauge(name string) *prometheus.GaugeVec {
	m := spec(name)
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: m.Name, Help: m.Help}, m.Labels)
}

func counter(name string) *prometheus.CounterVec {
	m := spec(name)
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: m.Name, Help: m.Help}, m.Labels)
}

// newPromMetrics builds the collectors; exemplars is Options.Exemplars.
func newPromMetrics(classic bool, exemplars int) *promMetrics {
	if exemplars == 0 {
		exemplars = DefaultExemplars
	}
	return &promMetrics{
		exemplars: exemplars > 0,
		ttft:      histogram(metricTTFT, bucketsTTFT, classic, exemplars),
		turnTTFT:  histogram(metricTurnTTFT, bucketsTTFT, classic, exemplars),
		turns:     counter(metricTurns),

		answerChecks: counter(metricAnswerChecks),
		chunk:        histogram(metricChunk, bucketsChunk, classic, exemplars),
		tpot:         histogram(metricTPOT, bucketsChunk, classic, exemplars),
		duration:     histogram(metricDuration, bucketsDuration, classic, exemplars),
		lag:          histogram(metricLag, bucketsLag, classic, -1), // the prober's lateness, not a response to open: no exemplars

		planned:         counter(metricPlanned),
		dispatched:      counter(metricDispatched),
		requests:        counter(metricRequests),
		good:            counter(metricGood),
		tokens:          counter(metricTokens),
		cachedPrompt:    counter(metricCachedPrompt),
		cacheReported:   counter(metricCacheReported),
		identityChanges: counter(metricIdentityChanges),
		dropped:         counter(metricDropped),

		inFlight:       gauge(metricInFlight),
		oldest:         gauge(metricOldest),
		arrivalRate:    gauge(metricArrivalRate),
		generatorValid: gauge(metricGeneratorValid),
		invalidCause:   gauge(metricInvalidCause),
		lagMax:         gauge(metricLagMax),
		capacity:       gauge(metricCapacity),
		knee:           gauge(metricKnee),
		ladderLast:     gauge(metricLadderLast),
		stepRate:       gauge(metricStepRate),
		stepTTFT:       gauge(metricStepTTFT),
		stepGoodput:    gauge(metricStepGoodput),
		stepSaturated:  gauge(metricStepSaturated),
		budgetTokens:   gauge(metricBudgetTokens),
		budgetRequests: gauge(metricBudgetRequests),
		sloTTFT:        gauge(metricSLOTTFT),
		buildInfo:      gauge(metricBuildInfo),
		targetInfo:     gauge(metricTargetInfo),
		fleetInfo:      gauge(metricFleetInfo),
		path:           newPathMetrics(),
		ladderIdentity: gauge(metricLadderIdentity),
	}
}

func (m *promMetrics) collectors() []prometheus.Collector {
	return append([]prometheus.Collector{
		m.ttft, m.chunk, m.tpot, m.duration, m.lag,
		m.planned, m.dispatched, m.requests, m.good, m.tokens, m.cachedPrompt, m.cacheReported, m.identityChanges, m.dropped,
		m.inFlight, m.oldest, m.arrivalRate, m.generatorValid, m.invalidCause, m.lagMax, m.capacity, m.knee, m.ladderLast,
		m.stepRate, m.stepTTFT, m.stepGoodput, m.stepSaturated, m.budgetTokens, m.budgetRequests, m.sloTTFT,
		m.buildInfo, m.targetInfo, m.fleetInfo, m.turnTTFT, m.turns, m.ladderIdentity, m.answerChecks,
	}, m.path.collectors()...)
}

// perTarget lists the vectors that carry a target label, for ForgetTarget.
func (m *promMetrics) perTarget() []interface {
	DeletePartialMatch(prometheus.Labels) int
} {
	return append([]interface {
		DeletePartialMatch(prometheus.Labels) int
	}{
		m.ttft, m.chunk, m.tpot, m.duration, m.lag,
		m.planned, m.dispatched, m.requests, m.good, m.tokens, m.cachedPrompt, m.cacheReported, m.identityChanges,
		m.inFlight, m.oldest, m.arrivalRate, m.generatorValid, m.invalidCause, m.lagMax, m.capacity, m.knee, m.ladderLast,
		m.stepRate, m.stepTTFT, m.stepGoodput, m.stepSaturated, m.budgetTokens, m.budgetRequests, m.sloTTFT, m.targetInfo,
		m.turnTTFT, m.turns, m.ladderIdentity, m.answerChecks,
	}, m.path.perTarget()...)
}

// reqKey is one (outcome, reason) pair of llmprobe_requests_total.
type reqKey struct {
	outcome ledger.Outcome
	reason  ledger.Reason
}

// promSeries holds the children of one (target, class, traffic, during),
// resolved once so that recording a request does no label hashing.
type promSeries struct {
	target, class, traffic, during                 string // the label values, sanitised once
	planned, dispatched, good, tokensIn, tokensOut prometheus.Counter
	cachedPrompt, cacheReported                    prometheus.Counter
	ttft, chunk, tpot, duration, lag               prometheus.Observer
	reqVec                                         *prometheus.CounterVec

	mu       sync.Mutex
	requests map[reqKey]prometheus.Counter // the (outcome, reason) series created so far
	buffered prometheus.Counter            // the target's, shared by its series
}

// initialReasons is the one reason per outcome whose
// llmprobe_requests_total series is created at zero with its series: its
// first reason in ledger order, but unsent's client_cap, which an alert
// names (LLMProbeGeneratorInvalid). The outcome level is what the shipped
// rules and panels aggregate at (sum by outcome, or all outcomes), so
// each has a series, and a rate, from the start; another reason's series
// is created when it first occurs (docs/metrics.md#cardinality).
func initialReasons() []reqKey {
	out := make([]reqKey, 0, len(ledger.Outcomes))
	for _, o := range ledger.Outcomes {
		r := ledger.ReasonsFor(o)[0]
		if o == ledger.Unsent {
			r = ledger.ReasonClientCap
		}
		out = append(out, reqKey{o, r})
	}
	return out
}

// initSeries creates the series of (target, class, traffic, during) at
// zero, so that rates exist before the first event: one outcome series
// each (initialReasons), both token types, and the histograms. It returns
// their children.
func (m *promMetrics) initSeries(target, class string, traffic ledger.Traffic, during string) *promSeries {
	t := string(traffic)
	s := &promSeries{
		target:        target,
		class:         class,
		traffic:       t,
		during:        during,
		planned:       m.planned.WithLabelValues(target, class, t, during),
		dispatched:    m.dispatched.WithLabelValues(target, class, t, during),
		good:          m.good.WithLabelValues(target, class, t, during),
		tokensIn:      m.tokens.WithLabelValues(target, class, t, during, tokenTypeInput),
		tokensOut:     m.tokens.WithLabelValues(target, class, t, during, tokenTypeOutput),
		cachedPrompt:  m.cachedPrompt.WithLabelValues(target, class, t, during),
		cacheReported: m.cacheReported.WithLabelValues(target, class, t, during),
		ttft:          m.ttft.WithLabelValues(target, class, t, during),
		chunk:         m.chunk.WithLabelValues(target, class, t, during),
		tpot:          m.tpot.WithLabelValues(target, class, t, during),
		duration:      m.duration.WithLabelValues(target, class, t, during),
		lag:           m.lag.WithLabelValues(target, class, t, during),
		reqVec:        m.requests,
		requests:      map[reqKey]prometheus.Counter{},
		buffered:      m.path.buffered.WithLabelValues(target),
	}
	for _, k := range initialReasons() {
		s.requests[k] = m.requests.WithLabelValues(target, class, t, during, string(k.outcome), string(k.reason))
	}
	return s
}

// request returns the llmprobe_requests_total child of an (outcome,
// reason) pair of the series, creating it the first time.
func (s *promSeries) request(o ledger.Outcome, r ledger.Reason) (prometheus.Counter, error) {
	k := reqKey{o, r}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.requests[k]; c != nil {
		return c, nil
	}
	c, err := s.reqVec.GetMetricWithLabelValues(s.target, s.class, s.traffic, s.during, string(o), string(r))
	if err != nil {
		return nil, err
	}
	s.requests[k] = c
	return c, nil
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
	var ex prometheus.Labels // nil: no exemplar
	if m.exemplars {
		ex = prometheus.Labels{exemplarRequestID: strconv.FormatUint(r.ID, 10)}
		if r.TraceID != "" {
			ex[exemplarTraceID] = r.TraceID
		}
	}
	// The plan, then the dispatch, then the outcome: a scrape reads the
	// families one after the other while records arrive, and a later
	// scrape's dispatched is never below an earlier one's outcomes, nor
	// (without retries) its planned below an earlier one's dispatched.
	if r.Attempt <= 1 {
		s.planned.Inc()
	}
	lag, dispatched := r.DispatchLag()
	if dispatched {
		s.dispatched.Inc()
	}
	if req, err := s.request(r.Outcome, r.Reason); err != nil {
		drop(DropLabel, metricRequests, err)
	} else {
		req.Inc()
	}
	if dispatched {
		observe(s.lag, lag, nil)
	}
	if r.Usage.Known {
		// Counts are checked where they are decoded (ledger.CheckUsage);
		// a record built elsewhere gets the same guard here.
		for _, x := range []struct {
			c prometheus.Counter
			n int
		}{{s.tokensIn, r.Usage.Prompt}, {s.tokensOut, r.Usage.Completion}} {
			if x.n < 0 {
				drop(DropNegative, metricTokens, fmt.Errorf("token count %d", x.n))
				continue
			}
			x.c.Add(float64(x.n))
		}
	}
	if cached, prompt, ok := r.CachedOfPrompt(); ok {
		if cached < 0 || prompt < cached {
			drop(DropNegative, metricCachedPrompt, fmt.Errorf("cached prompt tokens %d of %d", cached, prompt))
		} else {
			s.cachedPrompt.Add(float64(cached))
			s.cacheReported.Add(float64(prompt))
		}
	}
	m.path.record(s.buffered, s.target, r)
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
