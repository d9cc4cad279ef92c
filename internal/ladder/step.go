package ladder

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
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
	// classPlanned and classFinished split planned and finished by class:
	// each class's requests still pending when the step is summarised.
	classPlanned  map[string]int
	classFinished map[string]int
	rng           *rand.Rand
	// The in-step TTFT rule: limit is TTFTGateMultiple × TTFTGate (0:
	// off); ttftN/ttftOver count the step's finished ok requests with a
	// TTFT and those above limit; flight holds its requests in flight.
	limit    time.Duration
	ttftN    int
	ttftOver int
	flight   map[uint64]*inFlight
	// midReason says why the step was stopped inside its window (a mid-step
	// rule, or the caller: Session.Abort); cancel stops its arrivals.
	midReason string
	cancel    context.CancelFunc
	// refused counts the step's requests the target refused (nothing
	// listening): the target restarted during the step.
	refused int
}

// abort stops the step's arrivals (its requests still settle) with why,
// once: the first reason stands.
func (st *stepState) abort(why string) {
	st.mu.Lock()
	first := st.midReason == ""
	if first {
		st.midReason = why
	}
	cancel := st.cancel
	st.mu.Unlock()
	if first && cancel != nil {
		cancel()
	}
}

// setCancel gives the step the cancel of its arrivals (at once, if it was
// aborted before its arrivals began).
func (st *stepState) setCancel(cancel context.CancelFunc) {
	st.mu.Lock()
	st.cancel = cancel
	early := st.midReason != ""
	st.mu.Unlock()
	if early {
		cancel()
	}
}

// aborted is why the step was stopped inside its window, or "".
func (st *stepState) aborted() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.midReason
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

// classPending is class's requests planned and not yet finished.
func (st *stepState) classPending(class string) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.classPlanned[class] - st.classFinished[class]
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
	if st.classFinished == nil {
		st.classFinished = map[string]int{}
	}
	st.classFinished[rec.Class]++
	if rec.Reason == ledger.ReasonConnectionRefused {
		st.refused++
	}
	restarted := st.refused == 1 && rec.Reason == ledger.ReasonConnectionRefused
	if ttft, ok := rec.TTFT(); ok && rec.Outcome == ledger.OK && st.limit > 0 {
		st.ttftN++
		if ttft > st.limit {
			st.ttftOver++
		}
	}
	st.mu.Unlock()
	if restarted { // no figure of this step describes one running server
		st.abort(midStep + restartReason)
	}
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

// ttftCounts are the in-step TTFT rule's inputs at ledger offset now:
// judged counts the step's finished ok requests with a TTFT, the requests
// in flight whose first token arrived (their TTFT is known) and, when the
// Exec marks first tokens, those in flight still waiting for it past the
// limit (their TTFT, should they succeed, exceeds it); over counts those
// above the limit, waiting the ones still waiting. Requests waiting less
// than the limit are not judged yet.
func (st *stepState) ttftCounts(now time.Duration, marks bool) (judged, over, waiting int) {
	if st.limit <= 0 {
		return 0, 0, 0
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	judged, over = st.ttftN, st.ttftOver
	for _, f := range st.flight {
		switch first := time.Duration(f.first.Load()); {
		case first > 0:
			judged++
			if first-f.planned > st.limit {
				over++
			}
		case marks && now-f.planned > st.limit:
			judged++
			over++
			waiting++
		}
	}
	return judged, over, waiting
}

func (st *stepState) ttftLowerBound(now time.Duration, marks bool, min int, multiple float64, gate time.Duration) string {
	n, over, waiting := st.ttftCounts(now, marks)
	return TTFTInFlight(n, over, waiting, min, multiple, gate)
}

// TTFTInFlight is the in-step TTFT rule on its counts (see the step's
// ttftCounts; a fleet coordinator sums its shards'): the step must stop
// when at least min requests were judged and more than 5% of them are over
// multiple × gate (the TTFT p95 is above it, nearest rank). It reports
// why, or "".
func TTFTInFlight(judged, over, waiting, min int, multiple float64, gate time.Duration) string {
	limit := time.Duration(multiple * float64(gate))
	if limit <= 0 || judged < min || judged == 0 || float64(judged-over) >= 0.95*float64(judged) {
		return ""
	}
	return fmt.Sprintf("TTFT p95 above %g × gate %s: %d of %d requests over %s (%d still waiting for their first token)",
		multiple, durfmt.Format(gate), over, judged, durfmt.Format(limit), waiting)
}

func (r *Runner) meta(st *stepState) func(time.Duration) ledger.Meta {
	cum := Weights(r.cfg.Classes).Cumulative()
	return func(time.Duration) ledger.Meta {
		st.mu.Lock()
		st.planned++
		class := r.cfg.Classes[schedule.Pick(cum, st.rng.Float64())].Name
		if st.classPlanned == nil {
			st.classPlanned = map[string]int{}
		}
		st.classPlanned[class]++
		st.mu.Unlock()
		return ledger.Meta{Traffic: ledger.TrafficLadder, Target: r.cfg.Target, Class: class, API: r.cfg.API, Step: st.n,
			During: ledger.DuringLadder, TTFTBoundary: r.cfg.TTFTBoundary}
	}
}
