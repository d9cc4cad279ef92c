package ladder

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// stepState is the live state of the step being run.
type stepState struct {
	n     int
	rate  float64
	start time.Duration // ledger offset of the step's schedule offset 0
	acc   *stats.Accumulator
	class map[string]*stats.Accumulator // each class's own records and gates
	note  chan struct{}                 // a record finished (capacity 1)

	mu       sync.Mutex
	planned  int
	finished int
	rng      *rand.Rand
	// The in-step TTFT rule: limit is TTFTGateMultiple × TTFTGate (0:
	// off); ttftN/ttftOver count the step's finished ok requests with a
	// TTFT and those above limit; flight holds its requests in flight.
	limit    time.Duration
	ttftN    int
	ttftOver int
	flight   map[uint64]*inFlight
}

// inFlight is one request of the step in flight: its planned offset and,
// once its Exec marked it, when its first token arrived.
type inFlight struct {
	planned time.Duration
	first   atomic.Int64 // ledger offset of the first token; 0 = none yet
}

func (st *stepState) counts() (planned, finished int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.planned, st.finished
}

// Record implements ledger.Sink: it keeps this target's ladder records of
// the step being run.
func (r *Runner) Record(rec *ledger.Record) {
	if rec.Traffic != ledger.TrafficLadder || rec.Target != r.cfg.Target {
		return
	}
	r.mu.Lock()
	st := r.cur
	r.mu.Unlock()
	if st == nil || rec.Step != st.n || rec.ArrivalPlanned() < st.start {
		return // a straggler of an earlier step or ladder
	}
	st.acc.Add(rec)
	if a := st.class[rec.Class]; a != nil {
		a.Add(rec)
	}
	st.mu.Lock()
	st.finished++
	if ttft, ok := rec.TTFT(); ok && rec.Outcome == ledger.OK && st.limit > 0 {
		st.ttftN++
		if ttft > st.limit {
			st.ttftOver++
		}
	}
	st.mu.Unlock()
	select {
	case st.note <- struct{}{}:
	default:
	}
}

// firstTokenKey carries a ladder request's first-token mark in its context.
type firstTokenKey struct{}

// FirstTokenFunc returns the function an Exec calls, once, when the request
// whose context is ctx receives its first token (under its TTFT boundary),
// or nil when ctx is not a ladder request's. It lets the in-step TTFT rule
// tell a request still waiting for its first token from one streaming a
// long answer.
func FirstTokenFunc(ctx context.Context) func() {
	f, _ := ctx.Value(firstTokenKey{}).(func())
	return f
}

// track wraps the Exec: while a request of step st runs it is in st's
// flight set, and its context carries its first-token mark.
func (r *Runner) track(st *stepState) dispatch.Exec {
	led := r.g.Ledger()
	return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		f := &inFlight{planned: rec.Planned}
		st.mu.Lock()
		st.flight[rec.ID] = f
		st.mu.Unlock()
		defer func() {
			st.mu.Lock()
			delete(st.flight, rec.ID)
			st.mu.Unlock()
		}()
		if r.cfg.ExecMarksFirstToken {
			ctx = context.WithValue(ctx, firstTokenKey{}, func() { f.first.CompareAndSwap(0, int64(led.Now())) })
		}
		return r.exec(ctx, rec, dispatched)
	}
}

// ttftLowerBound applies the TTFT rule to what is known at ledger offset
// now: the step's finished ok requests, the requests in flight whose first
// token arrived (their TTFT is known) and those in flight still waiting for
// it past the limit (their TTFT, should they succeed, exceeds it). Requests
// waiting less than the limit are not judged yet. It reports why the step
// must stop, or "". min is the smallest number of judged requests.
func (st *stepState) ttftLowerBound(now time.Duration, marks bool, min int, multiple float64, gate time.Duration) string {
	if st.limit <= 0 {
		return ""
	}
	st.mu.Lock()
	n, over, waiting := st.ttftN, st.ttftOver, 0
	for _, f := range st.flight {
		switch first := time.Duration(f.first.Load()); {
		case first > 0:
			n++
			if first-f.planned > st.limit {
				over++
			}
		case marks && now-f.planned > st.limit:
			n++
			over++
			waiting++
		}
	}
	st.mu.Unlock()
	// Nearest rank: p95 > limit when fewer than 95% of the TTFTs are within it.
	if n < min || n == 0 || float64(n-over) >= 0.95*float64(n) {
		return ""
	}
	return fmt.Sprintf("TTFT p95 above %g × gate %s: %d of %d requests over %s (%d still waiting for their first token)",
		multiple, gate, over, n, st.limit, waiting)
}

func (r *Runner) meta(st *stepState) func(time.Duration) ledger.Meta {
	total := 0.0
	for _, c := range r.cfg.Classes {
		total += c.Weight
	}
	return func(time.Duration) ledger.Meta {
		st.mu.Lock()
		st.planned++
		x := st.rng.Float64() * total
		st.mu.Unlock()
		class := r.cfg.Classes[len(r.cfg.Classes)-1].Name
		for _, c := range r.cfg.Classes {
			if x < c.Weight {
				class = c.Name
				break
			}
			x -= c.Weight
		}
		return ledger.Meta{Traffic: ledger.TrafficLadder, Target: r.cfg.Target, Class: class, API: r.cfg.API, Step: st.n,
			During: ledger.DuringLadder, TTFTBoundary: r.cfg.TTFTBoundary}
	}
}
