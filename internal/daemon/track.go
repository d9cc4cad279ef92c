package daemon

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmprobe/llmprobe/internal/budget"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// router fans finished records out to per-target sinks that come and go
// with reloads (the ledger's own sink list is fixed at construction).
type router struct {
	mu    sync.RWMutex
	sinks map[string]ledger.Sink
}

func newRouter() *router { return &router{sinks: map[string]ledger.Sink{}} }

func (rt *router) add(target string, s ledger.Sink) {
	rt.mu.Lock()
	rt.sinks[target] = s
	rt.mu.Unlock()
}

// remove unhooks a target's sink (after a reload removed the target and its
// last in-flight request finished).
func (rt *router) remove(target string) {
	rt.mu.Lock()
	delete(rt.sinks, target)
	rt.mu.Unlock()
}

// Record implements ledger.Sink.
func (rt *router) Record(rec *ledger.Record) {
	rt.mu.RLock()
	s := rt.sinks[rec.Target]
	rt.mu.RUnlock()
	if s != nil {
		s.Record(rec)
	}
}

// flightSet tracks a target's requests in flight and the planned offset of
// the oldest (for llmprobe_oldest_in_flight_seconds: age from planned).
type flightSet struct {
	mu sync.Mutex
	m  map[uint64]time.Duration
}

func newFlightSet() *flightSet { return &flightSet{m: map[uint64]time.Duration{}} }

func (f *flightSet) add(id uint64, planned time.Duration) {
	f.mu.Lock()
	f.m[id] = planned
	f.mu.Unlock()
}

func (f *flightSet) remove(id uint64) {
	f.mu.Lock()
	delete(f.m, id)
	f.mu.Unlock()
}

func (f *flightSet) snapshot() (n int, oldestPlanned time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	first := true
	for _, p := range f.m {
		if first || p < oldestPlanned {
			oldestPlanned, first = p, false
		}
	}
	return len(f.m), oldestPlanned
}

// validityWindow is how far back the live generator verdict looks.
const validityWindow = time.Minute

// ladderSpan is when ladders ran against a target, in ledger offsets, so
// that the target's baseline arrivals planned while one ran, or within its
// settle time after it ended, are labelled during="ladder": the ladder's own
// load, not the service, decided their fate, and they are kept out of the
// SLO figures. It belongs to the target's state (it survives reloads: a
// ladder a reload interrupted still settles).
type ladderSpan struct {
	mu       sync.Mutex
	running  int           // ladders running now (0 or 1: one at a time per target)
	start    time.Duration // the latest ladder's start
	endAt    time.Duration // the latest ladder's end (0 while none has ended)
	settle   time.Duration // how long after endAt arrivals still count as during it
	baseline [2]int64      // baseline records finished: [during none, during ladder]
}

// begin marks a ladder starting at ledger offset at.
func (s *ladderSpan) begin(at time.Duration) {
	s.mu.Lock()
	s.running++
	s.start = at
	s.mu.Unlock()
}

// end marks the ladder begun last ending at ledger offset at; arrivals
// planned up to settle later still count as during it.
func (s *ladderSpan) end(at, settle time.Duration) {
	s.mu.Lock()
	if s.running > 0 {
		s.running--
	}
	s.endAt, s.settle = at, settle
	s.mu.Unlock()
}

// during is the label of an arrival planned at ledger offset planned.
func (s *ladderSpan) during(planned time.Duration) ledger.During {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running > 0 && planned >= s.start {
		return ledger.DuringLadder
	}
	if s.endAt > 0 && planned >= s.start && planned < s.endAt+s.settle {
		return ledger.DuringLadder
	}
	return ""
}

// count tallies a finished baseline record by its label (status page).
func (s *ladderSpan) count(rec *ledger.Record) {
	if rec.Traffic != ledger.TrafficBaseline {
		return
	}
	i := 0
	if rec.During == ledger.DuringLadder {
		i = 1
	}
	s.mu.Lock()
	s.baseline[i]++
	s.mu.Unlock()
}

// snapshot returns the baseline counts and, when a ladder ran, the ledger
// offset until which baseline arrivals are labelled during it (running: a
// ladder is running now).
func (s *ladderSpan) snapshot() (none, during int64, until time.Duration, running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.endAt > 0 {
		until = s.endAt + s.settle
	}
	return s.baseline[0], s.baseline[1], until, s.running > 0
}

// targetState is what a target keeps across reloads: the requests it has in
// flight (started by any generation of its streams), the generator-validity
// window, the daily budget and the identity last seen. A reload must not
// reset any of them.
type targetState struct {
	flight *flightSet
	// validity is the live generator-validity window (the one rule,
	// stats.ValidityConfig.Judge, with the target's ladder.max_lag_p99).
	validity *stats.LiveValidity
	// invalid is the last verdict published (for logging its changes).
	invalid atomic.Bool
	// budget is set the first time a configuration gives the target a
	// budget and kept from then on; every finished record is charged to
	// it, so that spend and admissions stay right across reloads that
	// remove and restore the budget.
	budget atomic.Pointer[budget.Budget]
	// startLadderDone is set once the run_on_start ladder was triggered, so
	// a reload does not start another.
	startLadderDone atomic.Bool
	// ladderSpan labels baseline arrivals planned during a ladder.
	ladderSpan ladderSpan

	mu           sync.Mutex
	model        string // from responses
	version      string // from the configured response header / models field
	versionKnown bool   // the first identity poll was attempted (or none is configured)
}

func newTargetState() *targetState {
	return &targetState{flight: newFlightSet(), validity: stats.NewLiveValidity(validityWindow, stats.ValidityConfig{})}
}

// observeIdentity merges what one source saw into the target's identity and
// reports the identity to publish: ok is false while it is still
// incomplete (no model seen yet, or the first poll of the configured
// version source has not been attempted), so that the first sighting is
// never counted as a change.
func (s *targetState) observeIdentity(model string, version *string, polled bool) (m, v string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if model != "" {
		s.model = model
	}
	if version != nil {
		s.version = *version
	}
	if polled {
		s.versionKnown = true
	}
	return s.model, s.version, s.model != "" && s.versionKnown
}
