package dispatch

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// fineWindow is how close to an arrival the pacer stops trusting the
// runtime timer. Go's timers wake up to ~1 ms late when the process is
// otherwise idle (on Linux the netpoller sleeps in whole milliseconds), so
// the last fineWindow of a wait is slept with a nanosecond sleep of the
// thread instead (precise to the kernel's timer slack, ~50 µs by default).
// It costs one system call per arrival, and no spinning.
const fineWindow = 1500 * time.Microsecond

// await waits until ledger offset at. With spin 0 it sleeps on timer until
// fineWindow before at and then precisely (where the platform can; else
// on the timer to the end); with spin > 0 it sleeps on timer until spin
// before at and yields the processor in a loop for the rest. It returns
// ok false, at once, when done is closed or the group drains, whether or
// not the wait had to happen. alive is the latest ledger offset at which it
// saw the stream still running (0 when it saw none): the stop came after it.
func (g *Group) await(at, spin time.Duration, timer *time.Timer, done <-chan struct{}) (alive time.Duration, ok bool) {
	fine := spin == 0 && canSleepPrecisely
	lead := spin
	if fine {
		lead = fineWindow
	}
	d := at - g.led.Now()
	if d > lead {
		timer.Reset(d - lead)
		select {
		case <-timer.C:
		case <-done:
			return 0, false
		case <-g.drainCh:
			return 0, false
		}
	}
	for {
		now := g.led.Now() // before the check: the stream was running at now
		select {
		case <-done:
			return alive, false
		case <-g.drainCh:
			return alive, false
		default:
		}
		alive = now
		if (spin == 0 && !fine) || now >= at {
			return alive, true
		}
		// Let what this processor has queued (the requests of earlier
		// arrivals) start before the thread sleeps or spins.
		runtime.Gosched()
		if fine {
			if d := at - g.led.Now(); d > 0 {
				sleepPrecisely(d) // may end early (signals): the loop checks
			}
		}
	}
}

// openMeta is the Meta of the arrival planned at ledger offset at.
func openMeta(c OpenConfig, at time.Duration) ledger.Meta {
	var m ledger.Meta
	if c.Meta != nil {
		m = c.Meta(at)
	}
	m.Mode, m.User = ledger.ModeOpen, 0
	return m
}

// abandonDue ends, unsent/shutdown, the arrival at ledger offset at and every
// later one of the stream's schedule (inside its window) planned at or
// before alive, the last instant the stream was seen running before it
// stopped (ctx done or drain). A generator running behind its schedule had
// not reached them, but they fell due before the stop: they must not vanish
// from the ledger. Arrivals after alive are not recorded (the stop may have
// come before them). On a session stream each is a session's first turn,
// and its later turns end unsent/shutdown with it (a session always leaves
// its Turns records).
func (st *stream) abandonDue(c OpenConfig, start, at, alive time.Duration) {
	led := st.g.led
	for at <= alive {
		m := withAttempt(openMeta(c, at), st.retry)
		if c.Session != nil {
			m.Turn = 1
		}
		rec := led.Plan(m, at)
		id := rec.Session // read before the record ends
		st.planned(rec)
		_ = led.Unsent(rec, ledger.ReasonShutdown)
		if c.Session != nil {
			st.endUnsent(c, id, at, ledger.ReasonShutdown)
		}
		off, ok := c.Arrivals.Next()
		if !ok || (c.Window > 0 && off >= c.Window) {
			return
		}
		at = start + off
	}
}

// OpenConfig is one open-loop stream.
type OpenConfig struct {
	// Arrivals yields planned offsets from the stream start (a
	// *schedule.Sequence). Required.
	Arrivals Arrivals
	// Start is the ledger offset at which schedule offset 0 falls, so that
	// streams can be staggered. 0 means the moment Open is called.
	Start time.Duration
	// Window: arrivals at schedule offsets ≥ Window are not planned. 0 means
	// until ctx is done or the schedule is exhausted.
	Window time.Duration
	// MaxInFlight caps this stream's requests in flight; an arrival that
	// finds it full is unsent/client_cap at its planned time. 0 = no cap.
	MaxInFlight int
	// Meta describes each arrival (traffic, target, class, step). Mode is
	// forced to open, User to 0 and Attempt to the retry attempt. With a
	// Session, the sessions' goroutines call it too: it must then be safe
	// for concurrent use. Optional.
	Meta func(planned time.Duration) ledger.Meta
	// Admit may refuse an arrival at its planned time (budget, rate cap).
	// Optional.
	Admit Admit
	// Exec performs one request. Required.
	Exec Exec
	// OnPlan, when set, is called with every record the stream plans (first
	// attempts, retries, and arrivals ended unsent), just after it is
	// planned and before it can end: how a caller sharing a ledger with
	// other streams tells its own records apart (the /probe endpoint).
	// Optional.
	OnPlan func(*ledger.Record)
	// Retry is the retry policy; the zero value is off.
	Retry Retry
	// Session, when set, makes each arrival the first turn of a multi-turn
	// session whose later turns follow its replies (see Session). Optional.
	Session *Session
	// Spin spends the last Spin of each wait yielding the processor in a
	// loop instead of sleeping: the tightest dispatch, at the cost of up to
	// Spin of CPU per arrival. 0 (the default) sleeps: on the runtime timer
	// until 1.5 ms before the arrival, then (on Linux) with a precise
	// thread sleep, which costs one system call per arrival and keeps the
	// dispatch within the kernel's timer slack (~50 µs) on an idle machine.
	Spin time.Duration
}

func (c OpenConfig) validate() error {
	var errs []error
	if c.Arrivals == nil {
		errs = append(errs, errors.New("dispatch: open loop: no arrivals"))
	}
	if c.Exec == nil {
		errs = append(errs, errors.New("dispatch: open loop: no executor"))
	}
	if c.Start < 0 || c.Window < 0 || c.MaxInFlight < 0 || c.Spin < 0 {
		errs = append(errs, fmt.Errorf("dispatch: open loop: start %v, window %v, spin %v and max in flight %d must be ≥ 0", c.Start, c.Window, c.Spin, c.MaxInFlight))
	}
	if err := c.Retry.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("open loop: %w", err))
	}
	if c.Session != nil {
		if err := c.Session.validate(); err != nil {
			errs = append(errs, fmt.Errorf("open loop: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Open runs one open-loop stream and returns when its window ends, its
// schedule is exhausted, ctx is done or the group starts draining; requests
// still in flight then belong to the group (see Drain). Arrivals follow an
// absolute schedule: each is sent at epoch+Start+offset, whatever happened
// to earlier requests; the stream never waits for a response. An arrival
// the generator reaches late is dispatched at once (its lag, dispatched −
// planned, is recorded), never skipped; one that fell due before the
// stream stopped (ctx done, drain) but was not reached is recorded
// unsent/shutdown. Open returns an error only for a
// bad config or an Admit reason outside the unsent set.
func (g *Group) Open(ctx context.Context, c OpenConfig) error {
	if err := c.validate(); err != nil {
		return err
	}
	led := g.led
	start := c.Start
	if start == 0 {
		start = led.Now()
	}
	st := &stream{
		g: g, s: g.newStripe(), base: context.WithoutCancel(ctx),
		exec: c.Exec, admit: c.Admit, retry: c.Retry, lim: newLimiter(c.MaxInFlight), onPlan: c.OnPlan,
		done: ctx.Done(),
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	done := ctx.Done()
	var alive time.Duration // last offset the stream was seen running
	for {
		// Take the next offset before awaiting anything.
		off, ok := c.Arrivals.Next()
		if !ok || (c.Window > 0 && off >= c.Window) {
			return nil
		}
		at := start + off
		seen, ok := g.await(at, c.Spin, timer, done)
		alive = max(alive, seen)
		if !ok {
			st.abandonDue(c, start, at, alive)
			return nil
		}
		if c.Session != nil {
			if err := st.startSession(c, at); err != nil {
				return err
			}
			continue
		}
		f, fctx, err := st.arrive(openMeta(c, at), at)
		if err != nil {
			return err
		}
		if f != nil {
			go st.chain(fctx, f)
		}
	}
}
