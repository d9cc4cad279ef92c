package ladder

import (
	"context"
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// Config returns the runner's configuration with its defaults filled in
// (classes, settle, stop_at, TTFT gate): what Run judges by.
func (r *Runner) Config() Config { return r.cfg }

// StopHere says why a ladder must not offer another step after steps (the
// steps run so far, none aborted), or "" to go on: the stop_at rule Run
// applies after each step, for a caller that drives the steps itself (a
// fleet coordinator judging merged steps).
func StopHere(steps []ladderresult.LadderStep, cfg Config) string { return stopHere(steps, cfg) }

// Session holds the runner for a caller that runs its steps one at a time
// (a fleet shard offering its share of a fleet ladder on a shared
// timetable): Run cannot start meanwhile. Its steps are judged by the
// runner's abort rules, inside and after each step, as Run's are; stop_at
// and the verdicts are the caller's.
type Session struct {
	r          *Runner
	classGates map[string]stats.Gates
}

// Begin starts a session; ErrRunning when a ladder or a session is running.
func (r *Runner) Begin() (*Session, error) {
	if !r.running.TryLock() {
		return nil, ErrRunning
	}
	r.ident = r.identityNow()
	g := map[string]stats.Gates{}
	for _, c := range r.cfg.Classes {
		g[c.Name] = c.Gates
	}
	return &Session{r: r, classGates: g}, nil
}

// End releases the runner.
func (s *Session) End() { s.r.running.Unlock() }

// StepResult is one step of a session: its summary (Step.Aborted when an
// abort rule or Abort stopped it), the requests still in flight when it was
// summarised, and its cohort in mergeable form (every class together, and
// each class).
type StepResult struct {
	Step    ladderresult.LadderStep
	Pending int
	All     stats.ShardSummary
	Classes map[string]stats.ShardSummary
}

// Step runs step n (1-based, at the runner's n-th rate) with its schedule's
// offset 0 at ledger offset start (0: now; a later offset waits), and
// returns once it settled. Cancelling ctx ends it at once (its requests in
// flight are pending); Abort stops its arrivals and lets it settle.
func (s *Session) Step(ctx context.Context, n int, start time.Duration) (StepResult, error) {
	cfg := s.r.cfg
	if n < 1 || n > len(cfg.Steps) {
		return StepResult{}, fmt.Errorf("ladder: step %d of %d", n, len(cfg.Steps))
	}
	ls, pending, st, err := s.r.step(ctx, n, cfg.Steps[n-1], start, s.classGates)
	if err != nil {
		return StepResult{}, err
	}
	out := StepResult{Step: ls, Pending: pending, All: st.acc.ShardSummary(true), Classes: map[string]stats.ShardSummary{}}
	for name, a := range st.class {
		out.Classes[name] = a.ShardSummary(true)
	}
	return out, nil
}

// Abort stops the arrivals of the step running now (as a mid-step rule
// would: its requests settle and it is summarised), with why as its abort
// reason. It reports whether a step was running.
func (r *Runner) Abort(why string) bool {
	r.mu.Lock()
	st := r.cur
	r.mu.Unlock()
	if st == nil {
		return false
	}
	st.abort(why)
	return true
}

// Live is the step running now, as far as it has got: its counts (no
// samples) and the in-step TTFT rule's counts (see TTFTInFlight).
type Live struct {
	Step     int
	Planned  int
	Finished int
	All      stats.ShardSummary
	// TTFTJudged, TTFTOver and TTFTWaiting are the in-step TTFT rule's
	// counts at the time of the call.
	TTFTJudged, TTFTOver, TTFTWaiting int
	// AbortReason is why the step was stopped inside its window ("" while
	// it runs on).
	AbortReason string
}

// Live returns the step running now; ok is false between steps.
func (r *Runner) Live() (l Live, ok bool) {
	r.mu.Lock()
	st := r.cur
	r.mu.Unlock()
	if st == nil {
		return Live{}, false
	}
	p, f := st.counts()
	l = Live{Step: st.n, Planned: p, Finished: f, All: st.acc.ShardSummary(false), AbortReason: st.aborted()}
	l.TTFTJudged, l.TTFTOver, l.TTFTWaiting = st.ttftCounts(r.g.Ledger().Now(), r.cfg.ExecMarksFirstToken)
	return l, true
}
