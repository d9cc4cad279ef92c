package dispatch

import (
	"context"
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
)

// MaxSessionTurns bounds a session's turns (config bounds them lower).
const MaxSessionTurns = 1000

// Session makes each arrival of an open-loop stream the first turn of a
// conversation of Turns turns (docs/workloads.md#sessions). Sessions start
// on the stream's open-loop schedule, whatever happened to earlier ones;
// turn k ≥ 2 is planned when turn k-1 has ended ok, one think time after
// that end, and is then sent at its planned time like any arrival (same
// Admit, cap, retries). Every turn is a planned arrival of its own, ending
// in exactly one record: when a turn does not end ok (or is itself
// unsent), each later turn is recorded unsent/session_aborted at that
// moment (unsent/shutdown when the run is stopping), so a session always
// leaves Turns records. Sessions outlive the stream's window: a session
// started inside it runs its course until the group drains
// (AwaitSessions waits for them).
type Session struct {
	Turns int                // turns per session, 2..MaxSessionTurns
	Think schedule.ThinkSpec // the user's think time before each later turn
	// Seed seeds the think times: the stream's n-th session draws from
	// stream n of it, so a session's think times are a pure function of
	// the seed and its place in the schedule.
	Seed uint64
	// End, when set, is called once with a session's ID (its first turn's
	// record ID) when its every turn has ended: the caller's conversation
	// state for it can be dropped. Optional.
	End func(session uint64)
}

func (s *Session) validate() error {
	if s.Turns < 2 || s.Turns > MaxSessionTurns {
		return fmt.Errorf("dispatch: session: turns %d must be in 2..%d", s.Turns, MaxSessionTurns)
	}
	if err := s.Think.Validate(); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return nil
}

// startSession plans a session's first turn at ledger offset at and, when
// it is sent, hands the session to a goroutine of its own (counted in
// g.loops: Drain waits for it); when it ended unsent, ends the session.
func (st *stream) startSession(c OpenConfig, at time.Duration) error {
	st.started++
	think, err := schedule.NewThink(c.Session.Think, c.Session.Seed, st.started)
	if err != nil {
		return err
	}
	m := openMeta(c, at)
	m.Turn = 1
	f, fctx, id, err := st.arriveRec(m, at)
	if err != nil {
		return err
	}
	if f == nil {
		// The first turn ended unsent (perhaps a drain, which may already
		// have waited for g.loops): the rest end now, on this goroutine.
		st.endUnsent(c, id, at, ledger.ReasonSessionAborted)
		return nil
	}
	// f is registered in g.flights, which Drain waits for before g.loops:
	// this Add comes before any Drain's wait for it.
	st.g.loops.Add(1)
	st.g.sessions.Add(1)
	go st.session(fctx, f, id, at, c, think)
	return nil
}

// session runs a session's first turn (f) and its later turns, and records
// each turn it does not send.
func (st *stream) session(ctx context.Context, f *flight, id uint64, start time.Duration, c OpenConfig, think *schedule.Think) {
	g := st.g
	defer g.loops.Done()
	defer g.sessions.Done()
	if c.Session.End != nil {
		defer c.Session.End(id)
	}
	ok := st.chain(ctx, f) == ledger.OK
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for turn := 2; turn <= c.Session.Turns; turn++ {
		if !ok {
			st.abortSession(c, id, start, turn, ledger.ReasonSessionAborted)
			return
		}
		at := g.led.Now() + think.Next()
		if _, waited := g.await(at, 0, timer, st.done); !waited {
			st.abortSession(c, id, start, turn, ledger.ReasonShutdown)
			return
		}
		m := openMeta(c, at)
		m.Session, m.Turn, m.SessionPlanned = id, turn, start
		f, fctx, _, err := st.arriveRec(m, at)
		if err != nil || f == nil {
			ok = false // ended unsent (an err has ended it unsent/shutdown)
			continue
		}
		ok = st.chain(fctx, f) == ledger.OK
	}
}

// abortSession records turns from..Turns of session id unsent at this
// moment: with reason, or shutdown when the group is stopping.
func (st *stream) abortSession(c OpenConfig, id uint64, start time.Duration, from int, reason ledger.Reason) {
	led := st.g.led
	if st.g.draining.Load() {
		reason = ledger.ReasonShutdown
	}
	now := led.Now()
	for turn := from; turn <= c.Session.Turns; turn++ {
		m := openMeta(c, now)
		m.Session, m.Turn, m.SessionPlanned = id, turn, start
		rec := led.Plan(withAttempt(m, st.retry), now)
		st.planned(rec)
		_ = led.Unsent(rec, reason)
	}
}

// endUnsent ends session id whose first turn ended unsent: its later
// turns are recorded unsent now (reason, or shutdown when the group is
// stopping) and End is called.
func (st *stream) endUnsent(c OpenConfig, id uint64, start time.Duration, reason ledger.Reason) {
	st.abortSession(c, id, start, 2, reason)
	if c.Session.End != nil {
		c.Session.End(id)
	}
}

// AwaitSessions waits until every session the group started has ended, ctx
// is done or d has passed, and reports whether they all ended. A one-shot
// run calls it after its window, before Drain, so that the sessions it
// started can finish their turns.
func (g *Group) AwaitSessions(ctx context.Context, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		g.sessions.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}
