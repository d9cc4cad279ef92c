package dispatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
)

// ClosedConfig is a closed-loop run: Users users, each of which thinks,
// sends one request and waits for its response, over and over. Closed-loop
// load slows down when the target does (coordinated omission by design): it
// is for comparison only, and every record is labelled Mode=closed.
type ClosedConfig struct {
	Users int                // number of users, ≥ 1
	Think schedule.ThinkSpec // think time before each request
	Seed  uint64             // seeds the users' think times (user u uses stream u)
	// Start is the ledger offset the window runs from, so that it is the
	// window the run's report judges (the caller's start, taken before
	// whatever it did since). 0 means the moment Closed is called.
	Start time.Duration
	// Window: users start no request at or after Start+Window. 0 means
	// until ctx is done.
	Window time.Duration
	// Meta describes each request; Mode is forced to closed, User to the
	// 1-based user and Attempt to the retry attempt. Optional.
	Meta func(planned time.Duration) ledger.Meta
	// Admit may refuse a request (budget, rate cap); the user then waits
	// one think time, at least MinPause, before trying again. Optional.
	Admit Admit
	Exec  Exec  // required
	Retry Retry // zero value: off
	// Backoff is how long a user waits after a request (with its retries)
	// failed — rejected, http_error, timeout, transport_error or
	// stream_error — before its next one: instead of its think time when
	// longer, growing with each consecutive failure, reset by a success.
	// The zero value is 100 ms doubling up to 10 s without jitter. It keeps
	// a closed loop from hammering a failing target.
	Backoff Backoff
}

// MinPause is the least a closed-loop user waits after Admit refused it, so
// that a spent budget with zero think time does not spin.
const MinPause = 100 * time.Millisecond

func (c ClosedConfig) validate() error {
	var errs []error
	if c.Users < 1 {
		errs = append(errs, fmt.Errorf("dispatch: closed loop: users must be ≥ 1, got %d", c.Users))
	}
	if c.Exec == nil {
		errs = append(errs, errors.New("dispatch: closed loop: no executor"))
	}
	if c.Window < 0 || c.Start < 0 {
		errs = append(errs, fmt.Errorf("dispatch: closed loop: start %v and window %v must be ≥ 0", c.Start, c.Window))
	}
	if err := c.Think.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("closed loop: %w", err))
	}
	if err := c.Retry.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("closed loop: %w", err))
	}
	if err := c.Backoff.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("closed loop: %w", err))
	}
	return errors.Join(errs...)
}

// Closed runs a closed loop and returns when every user has stopped, or as
// soon as ctx is done or the window ends: users with a request in flight
// are then owned by the group and stop after it ends (see Drain). Each
// request is planned at the moment its user sends it, so dispatch lag is
// near zero by construction and latencies hide queueing: label them closed
// loop wherever they are shown.
func (g *Group) Closed(ctx context.Context, c ClosedConfig) error {
	if err := c.validate(); err != nil {
		return err
	}
	start := c.Start
	if start == 0 {
		start = g.led.Now()
	}
	wctx, cancel := ctx, context.CancelFunc(func() {})
	var end time.Duration // ledger offset the window ends at; 0: none
	if c.Window > 0 {
		end = start + c.Window
		wctx, cancel = context.WithTimeout(ctx, max(end-g.led.Now(), 0))
	}
	defer cancel()
	st := &stream{
		g: g, s: g.newStripe(), base: context.WithoutCancel(ctx),
		exec: c.Exec, admit: c.Admit, retry: c.Retry,
	}
	var users sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	for u := 1; u <= c.Users; u++ {
		think, err := schedule.NewThink(c.Think, c.Seed, uint64(u))
		if err != nil {
			return err
		}
		g.loops.Add(1)
		users.Add(1)
		go func() {
			defer g.loops.Done()
			defer users.Done()
			if err := st.user(wctx, u, end, think, c.Meta, c.Backoff); err != nil {
				errOnce.Do(func() { firstErr = err })
			}
		}()
	}
	all := make(chan struct{})
	go func() {
		users.Wait()
		close(all)
	}()
	select {
	case <-all:
		return firstErr
	case <-wctx.Done():
		return nil
	case <-g.drainCh:
		return nil
	}
}

// user is one closed-loop user's loop. After a failed request it waits the
// failure backoff (or its think time when longer) before the next one. It
// plans nothing at or after end (a ledger offset; 0: no end), even when
// its think timer fires before ctx's deadline is seen.
func (st *stream) user(ctx context.Context, u int, end time.Duration, think *schedule.Think, meta func(time.Duration) ledger.Meta, backoff Backoff) error {
	g, led := st.g, st.g.led
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	pause := time.Duration(0)
	failures, backoffs := 0, uint64(0)
	for {
		d := think.Next()
		if d < pause {
			d = pause
		}
		pause = 0
		if d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return nil
			case <-g.drainCh:
				return nil
			}
		}
		if ctx.Err() != nil || g.draining.Load() {
			return nil
		}
		at := led.Now()
		if end > 0 && at >= end {
			return nil
		}
		var m ledger.Meta
		if meta != nil {
			m = meta(at)
		}
		m.Mode, m.User = ledger.ModeClosed, u
		f, fctx, err := st.arrive(m, at)
		if err != nil {
			return err
		}
		if f == nil {
			pause = MinPause
			continue
		}
		if !targetFailure(st.chain(fctx, f)) {
			failures = 0
			continue
		}
		failures++
		backoffs++
		pause = backoff.Delay(failures, uint64(u)<<40^backoffs)
	}
}

// targetFailure reports whether an outcome is a failure the target caused
// (as opposed to ok, a cancellation, a censored or an unsent request).
func targetFailure(o ledger.Outcome) bool {
	switch o {
	case ledger.Rejected, ledger.HTTPError, ledger.Timeout, ledger.TransportError, ledger.StreamError:
		return true
	}
	return false
}
