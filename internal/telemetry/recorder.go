package telemetry

import (
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/metric"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// Options configure a Recorder. Zero values take the defaults.
type Options struct {
	// Region, when set, is a constant `region` label on every llmprobe_*
	// series (one prober per region; see the deploy notes). Set at start.
	Region string
	// Registerer receives the Prometheus collectors; nil means a new
	// registry from NewRegistry (see Recorder.Registry).
	Registerer prometheus.Registerer
	// MeterProvider receives the OTel instruments; nil disables OTel.
	MeterProvider metric.MeterProvider
	// Build fills llmprobe_build_info (GoVersion defaults to runtime.Version()).
	Build BuildInfo
	// Logger receives the first failure of each kind to record a value
	// (see llmprobe_telemetry_dropped_total); nil discards.
	Logger *slog.Logger
	// ClassicHistograms exposes the classic buckets beside the native
	// ones on every latency histogram (telemetry.classic_histograms;
	// docs/metrics.md#classic-buckets). Off: native buckets only. Set at
	// start.
	ClassicHistograms bool
	// Exemplars is how many exemplars each latency histogram keeps
	// (telemetry.exemplars; docs/metrics.md#exemplars), as client_golang
	// reads NativeHistogramMaxExemplars: 0 is the default
	// (DefaultExemplars), a negative number keeps none (and an observation
	// then carries none either). Set at start.
	Exemplars int
}

// Reasons a value was not recorded (llmprobe_telemetry_dropped_total).
const (
	DropLabel    = "label"    // a label value the registry refused
	DropNegative = "negative" // a negative or NaN amount for a counter
	DropPanic    = "panic"    // recording panicked; the value was lost, the process was not
)

// dropReasons is every reason, initialised at zero.
var dropReasons = []string{DropLabel, DropNegative, DropPanic}

// maxLabelBytes bounds a label value taken from a server (the model, the
// version), after the one cleaning rule.
const maxLabelBytes = 128

type seriesKey struct {
	target, class string
	traffic       ledger.Traffic
	during        string // Record.DuringLabel(): never empty
}

// duringsFor is the set of `during` values InitSeries creates for a
// traffic kind on a target with or without a ladder: ladder requests
// always run during a ladder, one-shot probes never, and the daemon's
// baseline runs during a ladder only on a target that has one.
func duringsFor(t ledger.Traffic, ladder bool) []string {
	switch {
	case t == ledger.TrafficLadder:
		return []string{ledger.DuringLadder.Label()}
	case t == ledger.TrafficBaseline && ladder:
		out := make([]string, 0, len(ledger.DuringValues))
		for _, d := range ledger.DuringValues {
			out = append(out, d.Label())
		}
		return out
	}
	return []string{ledger.DuringNone.Label()}
}

type classKey struct{ target, class string }

type identity struct{ model, version string }

// Recorder is the one telemetry sink: every finished record goes to the
// Prometheus collectors and, when configured, the OTel instruments. It is
// safe for concurrent use.
type Recorder struct {
	prom     *promMetrics
	phases   *phaseMetrics
	otel     *otelInstruments
	registry *prometheus.Registry // nil when the caller gave a Registerer
	log      *slog.Logger
	logged   sync.Map // drop reason → struct{}: each kind of failure is logged once

	fleet fleetState // scope of the ladder figures, llmprobe_fleet_info (fleet.go)

	mu        sync.Mutex
	gates     map[classKey]Gates
	series    map[seriesKey]*promSeries
	otelSets  map[seriesKey]*otelSeries // nil when OTel is off
	identity  map[string]identity
	endpoints map[string]Endpoint
}

// New builds a Recorder and registers its collectors.
func New(o Options) (*Recorder, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{
		log:       o.Logger,
		prom:      newPromMetrics(o.ClassicHistograms, o.Exemplars),
		phases:    newPhaseMetrics(),
		gates:     make(map[classKey]Gates),
		series:    make(map[seriesKey]*promSeries),
		identity:  make(map[string]identity),
		endpoints: make(map[string]Endpoint),
	}
	reg := o.Registerer
	if reg == nil {
		r.registry = NewRegistry()
		reg = r.registry
	}
	if o.Region != "" {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{"region": o.Region}, reg)
	}
	for _, c := range append(r.prom.collectors(), r.phases.collectors()...) {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("telemetry: register Prometheus collector: %w", err)
		}
	}
	b := defaultBuildInfo(o.Build)
	r.prom.buildInfo.WithLabelValues(sanitize.String(b.Version, maxLabelBytes), sanitize.String(b.Revision, maxLabelBytes), b.GoVersion).Set(1)
	for _, reason := range dropReasons {
		r.prom.dropped.WithLabelValues(reason)
	}
	r.SetFleet(0, 1) // alone until told otherwise
	if o.MeterProvider != nil {
		in, err := newOtelInstruments(o.MeterProvider)
		if err != nil {
			return nil, err
		}
		r.otel, r.otelSets = in, make(map[seriesKey]*otelSeries)
	}
	return r, nil
}

// Registry returns the registry New created, or nil when Options.Registerer
// was given.
func (r *Recorder) Registry() *prometheus.Registry { return r.registry }

// Record implements ledger.Sink. It never panics on a value: what cannot
// be recorded is counted in llmprobe_telemetry_dropped_total and its first
// occurrence logged.
func (r *Recorder) Record(rec *ledger.Record) {
	defer r.recoverDrop("record")
	s, g, os := r.seriesOf(rec)
	good := stats.IsGood(rec, g)
	r.prom.record(s, rec, good, r.drop)
	r.prom.recordTurn(s.target, s.class, rec, r.drop)
	r.prom.recordCheck(s.target, s.class, rec, r.drop)
	r.phases.record(rec)
	if os != nil {
		r.otel.record(os, rec, good)
		r.otel.recordCheck(rec)
	}
}

// seriesOf returns the Prometheus children, gates and OTel attribute sets
// of a record's series, creating them the first time. Target and class are
// configuration values; they go through the one cleaning rule all the same,
// so that no record can make a label value the registry refuses.
func (r *Recorder) seriesOf(rec *ledger.Record) (*promSeries, Gates, *otelSeries) {
	k := seriesKey{sanitize.String(rec.Target, maxLabelBytes), sanitize.String(rec.Class, maxLabelBytes), rec.Traffic, rec.DuringLabel()}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.seriesLocked(k)
	g := r.gates[classKey{rec.Target, rec.Class}]
	var os *otelSeries
	if r.otel != nil {
		if os = r.otelSets[k]; os == nil {
			os = newOtelSeries(k, rec.API, r.endpoints[rec.Target])
			r.otelSets[k] = os
		}
	}
	return s, g, os
}

// drop counts a value that was not recorded and logs the first failure of
// each kind.
func (r *Recorder) drop(reason, what string, err error) {
	r.prom.dropped.WithLabelValues(reason).Inc()
	if _, seen := r.logged.LoadOrStore(reason, struct{}{}); !seen {
		r.log.Warn("telemetry: a value was not recorded (counted in llmprobe_telemetry_dropped_total; further ones are not logged)",
			"reason", reason, "what", what, "err", sanitize.String(fmt.Sprint(err), 200))
	}
}

// recoverDrop turns a panic while recording into a counted, logged drop:
// telemetry never takes the prober down.
func (r *Recorder) recoverDrop(what string) {
	if p := recover(); p != nil {
		r.drop(DropPanic, what, fmt.Errorf("%v", p))
	}
}

// seriesLocked returns the children of k, creating its series at zero the
// first time. r.mu must be held.
func (r *Recorder) seriesLocked(k seriesKey) *promSeries {
	s := r.series[k]
	if s == nil {
		s = r.prom.initSeries(k.target, k.class, k.traffic, k.during)
		r.series[k] = s
	}
	return s
}

// InitSeries creates at zero the series of (target, class) that the
// traffic kinds given can produce, so rates and ratios exist before the
// first request finishes: baseline alone gives during="none"; with
// ladder among them (the target has a ladder) baseline also gives
// during="ladder", and ladder traffic its own during="ladder" series;
// probe gives during="none". A target without a ladder thus has no
// ladder series (docs/metrics.md#cardinality). Each series is created
// with one llmprobe_requests_total series per outcome (promSeries);
// Record creates any other series the first time it sees it.
func (r *Recorder) InitSeries(target, class string, traffic ...ledger.Traffic) {
	ladder := slices.Contains(traffic, ledger.TrafficLadder)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range traffic {
		for _, d := range duringsFor(t, ladder) {
			r.seriesLocked(seriesKey{target, class, t, d})
		}
	}
}

// SetGates sets the gates of a target's class, used for
// llmprobe_requests_good_total and exported as llmprobe_slo_ttft_seconds.
func (r *Recorder) SetGates(target, class string, g Gates) {
	r.mu.Lock()
	r.gates[classKey{target, class}] = g
	r.mu.Unlock()
	if g.TTFT > 0 {
		r.prom.sloTTFT.WithLabelValues(target, class).Set(g.TTFT.Seconds())
	} else {
		r.prom.sloTTFT.DeleteLabelValues(target, class)
	}
}

// Endpoint describes a target for the OTel semantic-convention attributes
// (host and port only: never a URL path, query or key).
type Endpoint struct {
	Provider     string // gen_ai.provider.name, e.g. "openai"
	Operation    string // gen_ai.operation.name; default from the record's API
	RequestModel string // gen_ai.request.model
	Address      string // server.address (host name or IP)
	Port         int    // server.port; 0 omits it
}

// SetEndpoint sets the OTel attributes of a target (for its records from
// now on).
func (r *Recorder) SetEndpoint(target string, e Endpoint) {
	r.mu.Lock()
	r.endpoints[target] = e
	r.forgetOtelLocked(target)
	r.mu.Unlock()
}

// forgetOtelLocked drops the attribute sets built for a target. r.mu must
// be held.
func (r *Recorder) forgetOtelLocked(target string) {
	for k := range r.otelSets {
		if k.target == target {
			delete(r.otelSets, k)
		}
	}
}

// ForgetTarget removes every series of a target (after a reload removed it).
func (r *Recorder) ForgetTarget(target string) {
	r.mu.Lock()
	for k := range r.series {
		if k.target == target {
			delete(r.series, k)
		}
	}
	for k := range r.gates {
		if k.target == target {
			delete(r.gates, k)
		}
	}
	r.forgetOtelLocked(target)
	delete(r.identity, target)
	delete(r.endpoints, target)
	r.mu.Unlock()
	for _, v := range r.prom.perTarget() {
		v.DeletePartialMatch(prometheus.Labels{labelTarget: target})
	}
	r.phases.forget(target)
}

// SetInFlight sets llmprobe_in_flight_requests and
// llmprobe_oldest_in_flight_seconds (the oldest request's age from its
// planned time; 0 when none are in flight).
func (r *Recorder) SetInFlight(target string, n int, oldest time.Duration) {
	r.prom.inFlight.WithLabelValues(target).Set(float64(n))
	if n == 0 {
		oldest = 0
	}
	r.prom.oldest.WithLabelValues(target).Set(oldest.Seconds())
}

// SetArrivalRate sets the scheduled arrival rate (requests per second).
func (r *Recorder) SetArrivalRate(target, class string, traffic ledger.Traffic, perSecond float64) {
	r.prom.arrivalRate.WithLabelValues(target, class, string(traffic)).Set(perSecond)
}

// SetGeneratorValid publishes a generator-validity verdict (the daemon's
// live window): llmprobe_generator_valid, and
// llmprobe_generator_invalid_cause 1 for each of its causes (0 for the
// others), and llmprobe_dispatch_lag_max_seconds, the window's largest lag.
func (r *Recorder) SetGeneratorValid(target string, v verdict.Validity, lagMax time.Duration) {
	valid := 0.0
	if v.Valid {
		valid = 1
	}
	r.prom.generatorValid.WithLabelValues(target).Set(valid)
	for _, c := range cause.Generator {
		x := 0.0
		if v.Has(c) {
			x = 1
		}
		r.prom.invalidCause.WithLabelValues(target, string(c)).Set(x)
	}
	r.prom.lagMax.WithLabelValues(target).Set(lagMax.Seconds())
}

// SetCapacity sets the capacity (with what it is: ladderresult.BoundMeasured or
// ladderresult.BoundLower, the bound label) and the knee of the last ladder for a
// class. A negative value removes the series (no capacity / no knee
// found); the series of the other bound is always removed, so one series
// per class holds the value.
func (r *Recorder) SetCapacity(target, class string, capacity float64, bound ladderresult.Bound, knee float64) {
	r.prom.capacity.DeletePartialMatch(prometheus.Labels{labelTarget: target, labelClass: class})
	if capacity >= 0 && !math.IsNaN(capacity) {
		if bound != ladderresult.BoundLower {
			bound = ladderresult.BoundMeasured
		}
		r.prom.capacity.WithLabelValues(target, class, string(bound), r.scope()).Set(capacity)
	}
	r.prom.knee.DeletePartialMatch(prometheus.Labels{labelTarget: target, labelClass: class})
	setOrDelete(r.prom.knee, knee, target, class, r.scope())
}

func setOrDelete(g *prometheus.GaugeVec, v float64, lv ...string) {
	if v < 0 || math.IsNaN(v) {
		g.DeleteLabelValues(lv...)
		return
	}
	g.WithLabelValues(lv...).Set(v)
}

// SetLadderSteps replaces the per-step gauges of a class with the steps of
// the last ladder and stamps llmprobe_ladder_last_run_timestamp_seconds.
func (r *Recorder) SetLadderSteps(target, class string, finished time.Time, steps []LadderStep) {
	sel := prometheus.Labels{labelTarget: target, labelClass: class}
	r.prom.stepRate.DeletePartialMatch(sel)
	r.prom.stepTTFT.DeletePartialMatch(sel)
	r.prom.stepGoodput.DeletePartialMatch(sel)
	r.prom.stepSaturated.DeletePartialMatch(sel)
	for _, s := range steps {
		step := strconv.Itoa(s.Step)
		r.prom.stepRate.WithLabelValues(target, class, step, r.scope()).Set(s.OfferedRate)
		if s.TTFTP95 > 0 {
			r.prom.stepTTFT.WithLabelValues(target, class, step, r.scope()).Set(s.TTFTP95.Seconds())
		}
		r.prom.stepGoodput.WithLabelValues(target, class, step, r.scope()).Set(s.Goodput)
		if s.Saturated >= 0 {
			r.prom.stepSaturated.WithLabelValues(target, class, step, r.scope()).Set(float64(s.Saturated))
		}
	}
	r.prom.ladderLast.DeletePartialMatch(prometheus.Labels{labelTarget: target})
	r.prom.ladderLast.WithLabelValues(target, r.scope()).Set(float64(finished.UnixNano()) / 1e9)
}

// SetBudget sets what is left of today's budgets; a negative value means
// unlimited and removes the series.
func (r *Recorder) SetBudget(target string, tokens, requests int64) {
	setOrDelete(r.prom.budgetTokens, float64(tokens), target)
	setOrDelete(r.prom.budgetRequests, float64(requests), target)
}

// SetTargetInfo records the target's identity (the model named in
// responses, an optional version). It reports whether this changed a
// previously known identity, in which case
// llmprobe_target_identity_changes_total is incremented. An empty model
// keeps the previous one (a response that named no model says nothing).
// Both are server text: they are cleaned by the one rule (sanitize) to at
// most 128 bytes before they become label values, and a value the
// registry still refuses is counted as dropped, never fatal.
func (r *Recorder) SetTargetInfo(target, model, version string) (changed bool) {
	defer r.recoverDrop("target info")
	model, version = sanitize.String(model, maxLabelBytes), sanitize.String(version, maxLabelBytes)
	r.mu.Lock()
	defer r.mu.Unlock()
	old, known := r.identity[target]
	if model == "" {
		model = old.model
	}
	next := identity{model, version}
	if known && old == next {
		return false
	}
	g, err := r.prom.targetInfo.GetMetricWithLabelValues(target, next.model, next.version)
	if err != nil {
		r.drop(DropLabel, metricTargetInfo, err)
		return false
	}
	r.identity[target] = next
	if known {
		r.prom.targetInfo.DeleteLabelValues(target, old.model, old.version)
		r.prom.identityChanges.WithLabelValues(target).Inc()
	} else {
		r.prom.identityChanges.WithLabelValues(target)
	}
	g.Set(1)
	return known
}
