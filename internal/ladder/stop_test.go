package ladder

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// fakeTarget answers ladder requests without HTTP: each step's requests get
// their first token ttft[step] after their planned time and end end[step]
// after it; a step with ttft 0 never sends a first token (the request waits
// until release is closed or its context ends). Execs mark the first token
// through FirstTokenFunc, as the daemon's does.
type fakeTarget struct {
	led     *ledger.Ledger
	ttft    map[int]time.Duration
	end     map[int]time.Duration
	release chan struct{}

	mu      sync.Mutex
	planned map[int]int // records finished per step
}

func newFakeLadder(t *testing.T, ttft, end map[int]time.Duration, cfg Config) (*fakeTarget, *Runner, *dispatch.Group) {
	t.Helper()
	f := &fakeTarget{ttft: ttft, end: end, release: make(chan struct{}), planned: map[int]int{}}
	var r *Runner
	f.led = ledger.New(time.Now(), ledger.SinkFunc(func(rec *ledger.Record) {
		f.mu.Lock()
		f.planned[rec.Step]++
		f.mu.Unlock()
		r.Record(rec)
	}))
	g := dispatch.NewGroup(f.led)
	var err error
	r, err = New(cfg, g, f.exec)
	if err != nil {
		t.Fatal(err)
	}
	return f, r, g
}

func (f *fakeTarget) exec(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
	dispatched()
	wait := func(until time.Duration) bool {
		d := until - f.led.Now()
		if d <= 0 {
			return true
		}
		tm := time.NewTimer(d)
		defer tm.Stop()
		select {
		case <-tm.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	ttft := f.ttft[rec.Step]
	if ttft == 0 { // never a first token
		select {
		case <-f.release:
		case <-ctx.Done():
		}
		rec.End = f.led.Now()
		return ledger.Result{Outcome: ledger.Timeout, Reason: ledger.ReasonFirstContent, Err: "first content timeout"}
	}
	if !wait(rec.Planned + ttft) {
		return ledger.Result{Outcome: ledger.Cancelled, Reason: ledger.ReasonInterrupted}
	}
	rec.FirstContent = f.led.Now()
	rec.ContentEvents = 1
	if mark := FirstTokenFunc(ctx); mark != nil {
		mark()
	}
	if !wait(rec.Planned + max(f.end[rec.Step], ttft)) {
		return ledger.Result{Outcome: ledger.Cancelled, Reason: ledger.ReasonInterrupted}
	}
	rec.LastContent = f.led.Now()
	rec.End = rec.LastContent
	return ledger.Result{Outcome: ledger.OK, Reason: ledger.ReasonStop}
}

func (f *fakeTarget) finishedIn(step int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.planned[step]
}

// TestStopAt: whatever stop_at says, no step more than one past the first
// failing step is ever offered; knee and capacity stop at once.
func TestStopAt(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: four whole ladders in real time, one per stop_at rule")
	}
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the parallel subtests
	const ms = time.Millisecond
	// Steps 1-2 are fast; step 3 is the knee (1.2 s > 5 × 100 ms) but
	// within the 2 s gate; step 4 is the first to fail the gate. The
	// margins leave room for timers firing late on a loaded machine.
	ttft := map[int]time.Duration{1: 100 * ms, 2: 100 * ms, 3: 1200 * ms, 4: 3 * time.Second, 5: 3 * time.Second, 6: 3 * time.Second}
	cases := []struct {
		stop      StopAt
		wantSteps int
		why       string
	}{
		{StopAtKnee, 3, "stop_at knee: the knee is step 3"},
		{StopAtCapacity, 4, "stop_at capacity: step 4 failed its gates"},
		{StopAtTop, 5, "stop_at top: step 5 is one past step 4"},
		{"", 4, "stop_at capacity: step 4 failed its gates"}, // the default
	}
	for _, tc := range cases {
		t.Run(string(tc.stop), func(t *testing.T) {
			t.Parallel()
			cfg := baseConfig("fake")
			cfg.Steps = []float64{10, 12, 14, 16, 18, 20}
			cfg.StepDuration = time.Second
			cfg.StopAt = tc.stop
			cfg.Classes[0].Gates.TTFT = 2 * time.Second
			cfg.KneeFactor = 5
			cfg.Settle = 5 * time.Second
			// This test is about where the ladder stops, not about the
			// generator: a loaded machine must not fail a step for lag.
			cfg.Validity = verdict.ValidityConfig{MaxLagP99: 5 * time.Second}
			f, r, g := newFakeLadder(t, ttft, nil, cfg)
			res, err := r.Run(context.Background(), "manual")
			g.Drain(context.Background(), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range rows(t, res) {
				t.Logf("step %d rate %g ttft p95 %.3fs good %.2f met %v", s.Step, s.Rate, s.TTFT.P95, s.GoodFraction, s.Met)
			}
			firstFail := 0
			for _, s := range rows(t, res) {
				if !s.Met {
					firstFail = s.Step
					break
				}
			}
			if firstFail > 0 && len(res.Steps) > firstFail+1 {
				t.Fatalf("offered %d steps, more than one past the first failing step %d", len(res.Steps), firstFail)
			}
			if len(res.Steps) != tc.wantSteps || res.Aborted || !strings.HasPrefix(res.Stopped, tc.why) {
				t.Fatalf("ran %d steps (aborted %v %q), stopped %q; want %d steps, stopped %q",
					len(res.Steps), res.Aborted, res.AbortReason, res.Stopped, tc.wantSteps, tc.why)
			}
			for step := tc.wantSteps + 1; step <= len(cfg.Steps); step++ {
				if n := f.finishedIn(step); n != 0 {
					t.Errorf("step %d planned %d arrivals after the ladder stopped", step, n)
				}
			}
			if res.Capacity != 14 || res.CapacityStep != 3 {
				t.Errorf("capacity %g (step %d), want 14 (step 3)", res.Capacity, res.CapacityStep)
			}
		})
	}
}

// TestInStepAbortBoundedTime: a step whose requests stop getting a first
// token is stopped inside the step, about limit + a check interval after
// they stop, although none of its requests has finished: each request
// still waiting past the TTFT limit counts as over it. Before this rule
// the step ran its whole window (no request finished, so nothing was
// judged) and the verdict came after it.
func TestInStepAbortBoundedTime(t *testing.T) {
	defer goleak.VerifyNone(t)
	cfg := baseConfig("fake")
	cfg.Steps = []float64{40}
	cfg.StepDuration = 20 * time.Second
	cfg.Classes[0].Gates.TTFT = 100 * time.Millisecond
	cfg.Abort = AbortRules{TTFTGateMultiple: 5} // limit 500 ms
	cfg.MidStepMin = 20
	cfg.ProgressEvery = 100 * time.Millisecond
	cfg.Settle = 500 * time.Millisecond
	cfg.ExecMarksFirstToken = true
	f, r, g := newFakeLadder(t, map[int]time.Duration{}, nil, cfg) // no first token, ever
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := r.Run(ctx, "manual")
	close(f.release)
	g.Drain(context.Background(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 1 || !res.Aborted {
		t.Fatalf("want the step aborted, got %d steps, aborted %v %q", len(res.Steps), res.Aborted, res.AbortReason)
	}
	row := rows(t, res)[0]
	if !strings.Contains(row.AbortReason, "mid-step: TTFT p95 above 5 × gate 100ms") || !strings.Contains(row.AbortReason, "still waiting for their first token") {
		t.Fatalf("abort reason %q: want the in-step TTFT rule with waiting requests", row.AbortReason)
	}
	// Bounded: the step's arrivals stopped long before its 20 s window
	// (800 arrivals) ended. At 40 req/s, 20 judged requests exist about
	// 0.5 s (the limit) + 0.5 s after the step started; half the window is
	// ten times that.
	full := int(40 * cfg.StepDuration.Seconds())
	if row.Planned+row.Pending >= full/2 {
		t.Fatalf("step planned %d of %d arrivals before the abort: not stopped within a bounded time", row.Planned+row.Pending, full)
	}
	t.Logf("aborted after %d of %d planned arrivals: %s", row.Planned+row.Pending, full, row.AbortReason)

	// The target's overload stopped the step, not the generator: judged
	// over the time its arrivals ran, it kept its schedule. (Judged over
	// the whole 20 s it was rate_not_reached: "0 dispatched, … accepted
	// for 800.0 expected".)
	//
	// Valid, or invalid with a host cause: a generator the host starved
	// (host_starved, cgroup_throttled) may also have fallen short of its
	// rate over that window (rate_not_reached beside the host cause, then
	// logged). Without a host cause, rate_not_reached fails: the window
	// was not cut to the time the arrivals ran (checked exactly below).
	if !row.Valid && len(row.InvalidCauses) == 0 {
		t.Errorf("the aborted step is generator-invalid, no cause named: %v", row.Invalid)
	}
	var hostCause bool
	var others []verdict.InvalidCause
	for _, c := range row.InvalidCauses {
		if c.Cause.IsHost() {
			hostCause = true
		} else {
			others = append(others, c)
		}
	}
	for _, c := range others {
		if c.Cause == cause.RateNotReached && hostCause {
			t.Logf("rate_not_reached beside a host cause (%v): %s", row.Invalid, c.Reason)
			continue
		}
		if c.Cause == cause.RateNotReached {
			t.Errorf("rate_not_reached on a step the target's overload stopped: %s", c.Reason)
		} else {
			t.Errorf("the aborted step is generator-invalid for %s without a host cause: %v", c.Cause, row.Invalid)
		}
	}
	s := res.Steps[0].Summary
	if s.WindowAsked != cfg.StepDuration || s.Window <= 0 || s.Window >= cfg.StepDuration/2 {
		t.Fatalf("window %s (asked %s): want it cut short to the time the arrivals ran", s.Window, s.WindowAsked)
	}
	offered := s.FirstDispatched + s.Pending
	if want := float64(offered) / s.Window.Seconds(); s.AchievedRate != want || row.AchievedRate != want {
		t.Errorf("achieved rate %g (row %g), want %d offered / %s = %g", s.AchievedRate, row.AchievedRate, offered, s.Window, want)
	}
	// Constant arrivals at 40 req/s over the window that ran, within the
	// arrival landing on either edge of it.
	if lo, hi := 40*s.Window.Seconds()-2, 40*s.Window.Seconds()+2; float64(s.Planned+s.Pending) < lo || float64(s.Planned+s.Pending) > hi {
		t.Errorf("%d arrivals planned in a %s window at 40 req/s", s.Planned+s.Pending, s.Window)
	}
	cs := res.Steps[0].Classes[0].Summary
	if cs.Window != s.Window || cs.WindowAsked != s.WindowAsked || cs.AchievedRate != s.AchievedRate {
		t.Errorf("class window %s (asked %s) rate %g; the step's %s (%s) %g", cs.Window, cs.WindowAsked, cs.AchievedRate, s.Window, s.WindowAsked, s.AchievedRate)
	}
	// No request ever got a first token, and the settle (500 ms) ended
	// before they did: they are pending, planned and not good.
	if s.Pending == 0 || row.Pending != s.Pending || cs.Pending != s.Pending || s.GoodFraction != 0 {
		t.Errorf("pending %d (row %d, class %d), good fraction %g: want every unfinished request pending and the fraction 0",
			s.Pending, row.Pending, cs.Pending, s.GoodFraction)
	}
}

// TestPendingNotGood: requests still in flight when a step's settle wait
// ends count against its good fraction (planned, not good), in the step
// and in its classes; without them the step's good fraction would be 1
// and the step met.
func TestPendingNotGood(t *testing.T) {
	defer goleak.VerifyNone(t)
	cfg := baseConfig("fake")
	cfg.Steps = []float64{20}
	cfg.StepDuration = time.Second
	cfg.Classes = []Class{{Name: "a", Weight: 1, Gates: stats.Gates{TTFT: time.Second}}, {Name: "b", Weight: 1, Gates: stats.Gates{TTFT: time.Second}}}
	cfg.Settle = 300 * time.Millisecond
	cfg.Validity = verdict.ValidityConfig{MaxLagP99: 5 * time.Second} // about pending, not the generator
	release := make(chan struct{})
	var r *Runner
	led := ledger.New(time.Now(), ledger.SinkFunc(func(rec *ledger.Record) { r.Record(rec) }))
	g := dispatch.NewGroup(led)
	var err error
	r, err = New(cfg, g, func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		dispatched()
		if rec.ID%3 == 0 { // a straggler: outlives the settle
			select {
			case <-release:
			case <-ctx.Done():
			}
			rec.End = led.Now()
			return ledger.Result{Outcome: ledger.Timeout, Reason: ledger.ReasonFirstContent, Err: "first content timeout"}
		}
		rec.FirstContent = led.Now()
		rec.LastContent, rec.End = rec.FirstContent, rec.FirstContent
		rec.ContentEvents = 1
		return ledger.Result{Outcome: ledger.OK, Reason: ledger.ReasonStop}
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background(), "manual")
	close(release)
	g.Drain(context.Background(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Steps[0].Summary
	if s.Pending == 0 || s.Good != s.Planned {
		t.Fatalf("pending %d, good %d of %d recorded: want stragglers pending and every recorded request good", s.Pending, s.Good, s.Planned)
	}
	if want := float64(s.Good) / float64(s.Planned+s.Pending); s.GoodFraction != want || s.GoodFraction >= 0.9 {
		t.Errorf("good fraction %g, want %d / (%d + %d pending) = %g", s.GoodFraction, s.Good, s.Planned, s.Pending, want)
	}
	row := rows(t, res)[0]
	if row.Pending != s.Pending || row.Met || res.CapacityStep != 0 {
		t.Errorf("row pending %d met %v, capacity step %d: a step with a third of its requests unfinished must not meet 0.9", row.Pending, row.Met, res.CapacityStep)
	}
	pending := 0
	for _, c := range res.Steps[0].Classes {
		cs := c.Summary
		pending += cs.Pending
		if want := float64(cs.Good) / float64(cs.Planned+cs.Pending); cs.GoodFraction != want {
			t.Errorf("class %s: good fraction %g, want %d / (%d + %d) = %g", c.Class, cs.GoodFraction, cs.Good, cs.Planned, cs.Pending, want)
		}
	}
	if pending != s.Pending {
		t.Errorf("the classes hold %d pending, the step %d", pending, s.Pending)
	}
}

// TestInStepAbortIgnoresLongStreams: a request streaming a long answer past
// the TTFT limit after a quick first token is not counted against the
// TTFT rule (the Exec marked its first token).
func TestInStepAbortIgnoresLongStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: seconds of long streams inside a step, in real time")
	}
	defer goleak.VerifyNone(t)
	cfg := baseConfig("fake")
	cfg.Steps = []float64{20}
	cfg.StepDuration = 3 * time.Second
	cfg.Classes[0].Gates = stats.Gates{TTFT: 100 * time.Millisecond}
	cfg.Abort = AbortRules{TTFTGateMultiple: 5} // limit 500 ms; every stream lasts 1.5 s
	cfg.MidStepMin = 20
	cfg.ProgressEvery = 100 * time.Millisecond
	cfg.Settle = 5 * time.Second
	cfg.ExecMarksFirstToken = true
	_, r, g := newFakeLadder(t, map[int]time.Duration{1: 20 * time.Millisecond}, map[int]time.Duration{1: 1500 * time.Millisecond}, cfg)
	res, err := r.Run(context.Background(), "manual")
	g.Drain(context.Background(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Aborted || len(res.Steps) != 1 || rows(t, res)[0].OK == 0 {
		t.Fatalf("aborted %v %q, steps %+v: long streams with a quick first token must not trip the TTFT rule", res.Aborted, res.AbortReason, res.Steps)
	}
}

// pendingOnly gives st's last class pending arrivals (planned in the step,
// still in flight when it was summarised) and no planned ones.
func pendingOnly(st ladderresult.LadderStep, pending int) ladderresult.LadderStep {
	c := &st.Classes[len(st.Classes)-1].Summary
	c.Planned, c.Pending, c.GoodFraction = 0, pending, 0
	return st
}

// TestFirstFailing: the step that ends the climb, on its own figures.
func TestFirstFailing(t *testing.T) {
	sum := func(valid bool, planned int, good float64) stats.Summary {
		s := stats.Summary{Planned: planned, GoodFraction: good}
		s.Validity.Valid = valid
		return s
	}
	one := func(valid bool, good float64) ladderresult.LadderStep {
		return ladderresult.LadderStep{Summary: sum(valid, 10, good)}
	}
	two := func(chat, long float64, longPlanned int) ladderresult.LadderStep {
		return ladderresult.LadderStep{Summary: sum(true, 10, (chat+long)/2), Classes: []ladderresult.ClassStep{
			{Class: "chat", Summary: sum(true, 10, chat)}, {Class: "long", Summary: sum(true, longPlanned, long)}}}
	}
	for _, tc := range []struct {
		name  string
		steps []ladderresult.LadderStep
		want  int
	}{
		{"passes throughout", []ladderresult.LadderStep{one(true, 1), one(true, 0.95)}, 0},
		{"fails at the lowest step (a broken target)", []ladderresult.LadderStep{one(true, 0.5), one(true, 1)}, 1},
		{"passes, then fails", []ladderresult.LadderStep{one(true, 1), one(true, 0.95), one(true, 0.4)}, 3},
		{"an invalid step is never used", []ladderresult.LadderStep{one(true, 1), one(false, 0.2), one(true, 0.95)}, 0},
		{"a class that never met does not stop the climb", []ladderresult.LadderStep{two(1, 0, 10), two(1, 0, 10)}, 0},
		{"a class that met, then failed, does", []ladderresult.LadderStep{two(1, 1, 10), two(1, 0.5, 10)}, 2},
		{"nobody meets", []ladderresult.LadderStep{two(1, 1, 10), two(0.2, 0.1, 10)}, 2},
		{"a class with no arrivals in a step is not judged there", []ladderresult.LadderStep{two(1, 1, 10), two(1, 0, 0)}, 0},
		// Every arrival of the class still in flight when the step was
		// summarised: planned, none good (stats.Qualifies's rule), so it is judged
		// and fails, as the table's met column and the capacity say.
		{"a class whose arrivals were all still pending is judged (and fails)", []ladderresult.LadderStep{two(1, 1, 10), pendingOnly(two(1, 0, 0), 4)}, 2},
	} {
		if got := firstFailing(tc.steps, 0.9); got != tc.want {
			t.Errorf("%s: first failing step %d, want %d", tc.name, got, tc.want)
		}
	}
}
