package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladder"
)

// stateFunc returns the coordinator's current announcement of the ladder,
// when it was read, and a channel closed when it may have changed.
type stateFunc func() (a Announcement, at time.Time, ok bool, next <-chan struct{})

// joinMargin: a step whose start is nearer than this when the shard first
// sees the ladder is not joined (its share would start late).
const joinMargin = 100 * time.Millisecond

// checkLead is how long before a step's start its go-ahead is read.
const checkLead = 100 * time.Millisecond

// runShare offers this shard's share of the fleet ladder a: step i at its
// timetable start, while the coordinator's state (state) allows it, each
// step judged by this shard's own abort rules; its results are kept for the
// coordinator. It returns when the ladder ends for this shard: every step
// offered, the coordinator stopped or aborted it, this shard's own abort
// rule tripped, the coordinator was lost (no fresh state for LostAfter), or
// ctx ended.
func (l *Ladder) runShare(ctx context.Context, a Announcement, state stateFunc) {
	s := l.record(a)
	log := l.log().With("ladder", a.ID)
	if a.Fingerprint != l.print {
		why := fmt.Sprintf("its configuration differs from the coordinator's (ladder fingerprint %s here, %s announced): run every shard with the same ladder, classes and timeouts", l.print, a.Fingerprint)
		l.update(s, func(s *share) { s.refused = why })
		log.Error("fleet ladder refused", "why", why)
		return
	}
	sess, err := l.runner.Begin()
	if err != nil {
		l.update(s, func(s *share) { s.refused = err.Error() })
		log.Error("fleet ladder refused", "why", err)
		return
	}
	defer sess.End()
	first := 0
	now := l.n.now()
	for i := 1; i <= len(a.Steps); i++ {
		if l.stepStart(a, i).Sub(now) >= joinMargin {
			first = i
			break
		}
	}
	if first == 0 {
		l.update(s, func(s *share) { s.refused = "saw the ladder after its last step began" })
		return
	}
	l.update(s, func(s *share) { s.from = first })
	if l.begin != nil {
		l.begin()
	}
	if l.end != nil {
		defer l.end()
	}
	stop := func(after int, why string) {
		l.update(s, func(s *share) { s.stopped, s.stopAt = why, after })
		log.Info("fleet ladder share stopped", "after_step", after, "why", why)
	}
	for i := first; i <= len(a.Steps); i++ {
		var start time.Time
		if a, start = l.awaitStart(ctx, state, a, i); ctx.Err() != nil {
			stop(i-1, "interrupted")
			return
		}
		if why := l.goAhead(ctx, state, i, start); why != "" {
			stop(i-1, why)
			return
		}
		// The go-ahead carries the step's start: a shard that read the
		// state late offers at the announced start (late, judged by its
		// own lag), never on a timetable of its own.
		if cur, _, ok, _ := state(); ok && cur.ID == a.ID {
			a, start = cur, l.stepStart(cur, i)
		}
		watchCtx, endWatch := context.WithCancel(ctx)
		go l.watch(watchCtx, state, a.ID)
		l.setCurrent(a.ID)
		res, err := sess.Step(ctx, i, l.ledNow()+start.Sub(l.n.now()))
		l.setCurrent("")
		endWatch()
		if err != nil {
			stop(i-1, err.Error())
			return
		}
		rep := l.stepReport(a, i, res)
		l.update(s, func(s *share) { s.steps[i] = rep })
		if ctx.Err() != nil {
			stop(i, "interrupted")
			return
		}
		if res.Step.Aborted {
			stop(i, res.Step.AbortReason)
			return
		}
	}
}

// awaitStart waits until checkLead before step i's start and returns it,
// with the latest announcement of a: the start is read again whenever the
// coordinator's state changes (it moves a step earlier when the step
// before ended early), so a shard never sleeps past a start that moved.
// ctx ending returns at once.
func (l *Ladder) awaitStart(ctx context.Context, state stateFunc, a Announcement, i int) (Announcement, time.Time) {
	for {
		cur, _, ok, next := state()
		if ok && cur.ID == a.ID {
			a = cur
		}
		start := l.stepStart(a, i)
		d := start.Add(-checkLead).Sub(l.n.now())
		if d <= 0 {
			return a, start
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return a, start
		case <-t.C:
			return a, start
		case <-next:
			t.Stop()
		}
	}
}

// goAhead waits for the coordinator to allow step i (starting at start)
// and says why this shard must not offer it ("" to go on). A decision
// comes DecisionLead before the start; one that has not come by the start
// (clock skew, a late coordinator) is waited for up to PollEvery more: a
// step started late is judged invalid by its own rate and lag.
func (l *Ladder) goAhead(ctx context.Context, state stateFunc, i int, start time.Time) string {
	deadline := start.Add(PollEvery)
	for {
		a, at, ok, next := state()
		now := l.n.now()
		switch {
		case !ok:
			return "the coordinator no longer announces the ladder"
		case a.State == StateAborted:
			return "fleet ladder aborted: " + a.Reason
		case a.State != StateRunning:
			return fmt.Sprintf("fleet ladder %s before step %d", a.State, i)
		case now.Sub(at) > LostAfter:
			return fmt.Sprintf("coordinator lost: no ladder state for %s", now.Sub(at).Round(100*time.Millisecond))
		case a.Allowed >= i:
			return ""
		case now.After(deadline):
			return fmt.Sprintf("no go-ahead from the coordinator for step %d by its start", i)
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return "interrupted"
		case <-next:
		case <-t.C:
		}
		t.Stop()
	}
}

// watch stops the running step's arrivals when the coordinator aborts the
// ladder, or when its state has not been read for LostAfter.
func (l *Ladder) watch(ctx context.Context, state stateFunc, id string) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		a, at, ok, next := state()
		switch {
		case ok && a.ID == id && a.State == StateAborted:
			l.runner.Abort("fleet: " + a.Reason)
			return
		case !ok && !at.IsZero() && l.n.now().Sub(at) <= LostAfter:
			l.runner.Abort("fleet: the coordinator no longer announces the ladder (restarted?)")
			return
		case l.n.now().Sub(at) > LostAfter:
			l.runner.Abort(fmt.Sprintf("coordinator lost: no ladder state for %s", l.n.now().Sub(at).Round(100*time.Millisecond)))
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-next:
		case <-t.C:
		}
	}
}

// stepReport is step i's results as this shard serves them.
func (l *Ladder) stepReport(a Announcement, i int, res ladder.StepResult) *StepReport {
	v := res.Step.Summary.Validity
	r := &StepReport{
		Ladder: a.ID, Target: a.Target, Step: i, Shard: l.n.id.Shard, Shards: l.n.id.Shards, Fingerprint: l.print,
		Rate: res.Step.Rate, Pending: res.Pending, AbortReason: res.Step.AbortReason,
		Valid: v.Valid, Causes: v.Causes, All: res.All, Classes: res.Classes,
	}
	if v.Host.Known {
		h := v.Host
		r.Host = &h
	}
	return r
}

// sleepUntil sleeps until the wall-clock instant t.
func sleepUntil(ctx context.Context, now func() time.Time, t time.Time) error {
	d := t.Sub(now())
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
