package sim

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The simulator's own metrics, served at GET /metrics under vLLM's names
// (classic buckets, a model_name label) so that llmprobe's server view of a
// vLLM target works against the simulator with no setup. Each slot is
// taken to hold one request's KV cache, so KV-cache usage is the fraction
// of slots in service.
const (
	metricRunning  = "vllm:num_requests_running"
	metricWaiting  = "vllm:num_requests_waiting"
	metricKVCache  = "vllm:kv_cache_usage_perc"
	metricTTFT     = "vllm:time_to_first_token_seconds"
	metricITL      = "vllm:inter_token_latency_seconds"
	metricE2E      = "vllm:e2e_request_latency_seconds"
	metricQueue    = "vllm:request_queue_time_seconds"
	metricSuccess  = "vllm:request_success_total"
	metricGenerate = "vllm:generation_tokens_total"
	// vLLM's prefix-cache counters, in tokens: the prompt tokens looked up
	// and those found (vllm/v1/metrics/loggers.py declares them as
	// vllm:prefix_cache_queries and vllm:prefix_cache_hits; as Prometheus
	// counters they are exposed with _total). Requests that skip the
	// lookup (the cache off) count in neither, as in vLLM.
	metricPrefixQueries = "vllm:prefix_cache_queries_total"
	metricPrefixHits    = "vllm:prefix_cache_hits_total"
)

// Buckets in the spirit of vLLM's own.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	itlBuckets  = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 10}
	e2eBuckets  = []float64{0.05, 0.1, 0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240}
)

// simMetrics is the simulator's registry (its own: no global state) and
// the instruments its service path observes.
type simMetrics struct {
	reg                   *prometheus.Registry
	handler               http.Handler
	ttft, itl, e2e, queue prometheus.Histogram
	success, tokens       prometheus.Counter
	prefixQueries         prometheus.Counter
	prefixHits            prometheus.Counter
}

func newSimMetrics(s *Server) *simMetrics {
	model := DefaultModel
	if len(s.cfg.Models) > 0 {
		model = s.cfg.Models[0]
	}
	labels := prometheus.Labels{"model_name": model}
	hist := func(name, help string, b []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: b, ConstLabels: labels})
	}
	m := &simMetrics{
		reg:     prometheus.NewRegistry(),
		ttft:    hist(metricTTFT, "Time from arrival to the first output chunk, seconds.", ttftBuckets),
		itl:     hist(metricITL, "Time between output chunks of a request, seconds.", itlBuckets),
		e2e:     hist(metricE2E, "Time from arrival to the end of the response of a finished request, seconds.", e2eBuckets),
		queue:   hist(metricQueue, "Time a request waited for a slot, seconds.", ttftBuckets),
		success: prometheus.NewCounter(prometheus.CounterOpts{Name: metricSuccess, Help: "Requests whose generation ran to its end.", ConstLabels: labels}),
		tokens:  prometheus.NewCounter(prometheus.CounterOpts{Name: metricGenerate, Help: "Output tokens generated (reasoning included).", ConstLabels: labels}),
		prefixQueries: prometheus.NewCounter(prometheus.CounterOpts{Name: metricPrefixQueries,
			Help: "Prefix cache queries, in terms of number of queried tokens.", ConstLabels: labels}),
		prefixHits: prometheus.NewCounter(prometheus.CounterOpts{Name: metricPrefixHits,
			Help: "Prefix cache hits, in terms of number of cached tokens.", ConstLabels: labels}),
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, f)
	}
	m.reg.MustRegister(
		gauge(metricRunning, "Requests holding a slot.", func() float64 { return float64(s.Stats().InService) }),
		gauge(metricWaiting, "Admitted requests waiting for a slot.", func() float64 { return float64(s.Stats().Queued) }),
		gauge(metricKVCache, "KV-cache usage as the fraction of slots in service (1 = full).", func() float64 {
			return min(1, float64(s.Stats().InService)/float64(s.slotCapacity()))
		}),
		m.ttft, m.itl, m.e2e, m.queue, m.success, m.tokens, m.prefixQueries, m.prefixHits,
	)
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return m
}

// slotCapacity is the number of service slots KV-cache usage is a
// fraction of: the live count, so a simulated deploy that halves the slots
// shows in the usage at once.
func (s *Server) slotCapacity() int { return max(1, s.live.get().Slots) }

// handleMetrics serves the simulator's metrics (no API key needed, as on
// vLLM).
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) { s.met.handler.ServeHTTP(w, r) }

// reqTrace times one admitted request for the metrics.
type reqTrace struct {
	m                *simMetrics
	arrived, lastOut time.Time
	chunks           int
}

// trace starts timing a request that arrived at t.
func (m *simMetrics) trace(t time.Time) reqTrace { return reqTrace{m: m, arrived: t} }

// inService records the wait for a slot.
func (r *reqTrace) inService(t time.Time) { r.m.queue.Observe(t.Sub(r.arrived).Seconds()) }

// chunk records an output chunk of n tokens due at t: the first one's TTFT,
// each later one's interval.
func (r *reqTrace) chunk(t time.Time, n int) {
	if r.chunks == 0 {
		r.m.ttft.Observe(t.Sub(r.arrived).Seconds())
	} else {
		r.m.itl.Observe(t.Sub(r.lastOut).Seconds())
	}
	r.chunks++
	r.lastOut = t
	r.m.tokens.Add(float64(n))
}

// finished records a generation that ran to its end at t.
func (r *reqTrace) finished(t time.Time) {
	r.m.e2e.Observe(t.Sub(r.arrived).Seconds())
	r.m.success.Inc()
}
