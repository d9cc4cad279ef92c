package dispatch

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond}
	for n, want := range map[int]time.Duration{1: 10 * time.Millisecond, 2: 20 * time.Millisecond, 3: 40 * time.Millisecond, 4: 50 * time.Millisecond, 60: 50 * time.Millisecond} {
		if got := b.Delay(n, 1); got != want {
			t.Errorf("Delay(%d) = %v, want %v", n, got, want)
		}
	}
	if got := (Backoff{}).Delay(1, 1); got != DefaultBackoff {
		t.Errorf("zero Backoff: first wait %v, want %v", got, DefaultBackoff)
	}
	if got := (Backoff{}).Delay(100, 1); got != DefaultMaxBackoff {
		t.Errorf("zero Backoff: wait after 100 failures %v, want the cap %v", got, DefaultMaxBackoff)
	}
	// Jitter: within (d·(1−J), d], the same for the same seed, key and n,
	// and not one value for every key.
	j := Backoff{Base: time.Second, Max: time.Second, Jitter: 0.5, Seed: 42}
	distinct := map[time.Duration]bool{}
	for key := range uint64(50) {
		d := j.Delay(1, key)
		if d <= 500*time.Millisecond || d > time.Second {
			t.Fatalf("key %d: %v outside (0.5s, 1s]", key, d)
		}
		if again := j.Delay(1, key); again != d {
			t.Fatalf("key %d: %v then %v: jitter must be reproducible", key, d, again)
		}
		distinct[d] = true
	}
	if len(distinct) < 40 {
		t.Errorf("%d distinct waits over 50 keys: jitter does not spread", len(distinct))
	}
	other := j
	other.Seed = 43
	if other.Delay(1, 7) == j.Delay(1, 7) && other.Delay(1, 8) == j.Delay(1, 8) {
		t.Error("another seed draws the same jitter")
	}
	for _, bad := range []Backoff{{Base: -1}, {Max: -1}, {Base: 2 * time.Second, Max: time.Second}, {Jitter: 1.5}, {Jitter: -0.1}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// failExec fails every request at once, as a refused connection does.
func failExec(_ context.Context, _ *ledger.Record, dispatched func()) ledger.Result {
	dispatched()
	return ledger.Result{Outcome: ledger.TransportError, Reason: ledger.ReasonConnectionRefused, Err: "connection refused"}
}

// newBubbleRun is newRun inside a synctest bubble, whose clock stands still
// until every goroutine waits: it starts 1 ms past the ledger's epoch, since
// the ledger clamps an offset of 0 to 1 ns (on a real clock no request ends
// at the epoch itself). The closed-loop tests below wait only on timers
// (their exec answers at once, no socket), so the bubble's clock runs them
// in no time and their waits come out exact.
func newBubbleRun(t *testing.T) (*Group, *ledger.Ledger, *collector) {
	t.Helper()
	g, led, col := newRun(t)
	time.Sleep(time.Millisecond)
	return g, led, col
}

// capped wraps exec for a bubble: past most calls it reports a runaway loop
// and cancels the run (a user that does not wait spins in no time on the
// bubble's clock), so a broken backoff fails the test instead of hanging it.
func capped(t *testing.T, cancel context.CancelFunc, most int64, exec Exec) Exec {
	var n atomic.Int64
	return func(ctx context.Context, r *ledger.Record, dispatched func()) ledger.Result {
		if n.Add(1) == most {
			t.Errorf("%d requests: a user does not wait between failures", most)
			cancel()
		}
		return exec(ctx, r, dispatched)
	}
}

// TestClosedLoopBacksOffFailures (issue 8, defect 6): closed-loop users
// with no think time against a target that fails every request at once do
// not send the next request at once: each waits the failure backoff (100 ms
// doubling), so in a second a user sends a handful of requests, not
// thousands. (An upper bound on a count: a slow machine sends fewer.)
func TestClosedLoopBacksOffFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, led, col := newBubbleRun(t)
		const users, window = 4, time.Second
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := g.Closed(ctx, ClosedConfig{Users: users, Window: window, Exec: capped(t, cancel, 1000, failExec)}); err != nil {
			t.Fatal(err)
		}
		g.Drain(context.Background(), time.Second)
		c := checkLedger(t, led, col)
		// Waits of 100, 200, 400 and 800 ms: requests at 0, 0.1, 0.3 and 0.7 s.
		if most := users * 5; c.Planned > most || c.Planned < users {
			t.Errorf("%d requests by %d users in %v: want at most %d (failure backoff)", c.Planned, users, window, most)
		}
		byUser := map[int][]ledger.Record{}
		for _, r := range col.all() {
			byUser[r.User] = append(byUser[r.User], r)
		}
		for u, rs := range byUser {
			for i := 1; i < len(rs); i++ {
				want := DefaultBackoff << (i - 1)
				if gap := rs[i].Planned - rs[i-1].End; gap < want {
					t.Errorf("user %d request %d sent %v after the failure before it, want at least %v", u, i+1, gap, want)
				}
			}
		}
	})
}

// TestClosedLoopBacksOffWhenRetryRefused: a failed request whose retry is
// refused admission (a spent budget) is still the target's failure to the
// user: it waits the failure backoff, rather than taking the refused
// retry's unsent outcome for a success and sending again at once.
func TestClosedLoopBacksOffWhenRetryRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, led, col := newBubbleRun(t)
		const users, window = 4, time.Second
		noRetries := func(rec *ledger.Record) (ledger.Reason, bool) {
			if rec.IsRetry() {
				return ledger.ReasonBudget, false
			}
			return "", true
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := g.Closed(ctx, ClosedConfig{Users: users, Window: window, Exec: capped(t, cancel, 1000, failExec), Admit: noRetries,
			Retry: Retry{MaxAttempts: 3, Backoff: time.Millisecond}}); err != nil {
			t.Fatal(err)
		}
		g.Drain(context.Background(), time.Second)
		checkLedger(t, led, col)
		sent := 0
		for _, r := range col.all() {
			if !r.IsRetry() {
				sent++
			}
		}
		if most := users * 5; sent > most || sent < users {
			t.Errorf("%d first attempts by %d users in %v with every retry refused: want at most %d (failure backoff)", sent, users, window, most)
		}
	})
}

// TestClosedLoopBackoffResetsOnSuccess: a success resets the backoff, and
// an outcome that is not the target's failure (a cancellation) neither
// starts nor grows one. Five failures in a row make the wait grow to 16
// times the first; the wait after the first failure that follows a success
// (the first backoff again, not 32 times it) and the wait after a
// cancellation (none) are each compared with that long one, so the test
// asserts an order of waits, not a wall-clock bound.
func TestClosedLoopBackoffResetsOnSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, led, col := newBubbleRun(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		const (
			F = ledger.TransportError
			C = ledger.Cancelled
			K = ledger.OK
		)
		// Requests 1–5 fail, 6 succeeds, 7–11 fail, 12 is cancelled, 13 succeeds
		// and ends the run.
		script := []ledger.Outcome{F, F, F, F, F, K, F, F, F, F, F, C, K}
		var mu sync.Mutex
		n := 0
		exec := func(_ context.Context, r *ledger.Record, dispatched func()) ledger.Result {
			dispatched()
			mu.Lock()
			defer mu.Unlock()
			o := ledger.OK
			if n < len(script) {
				o = script[n]
			}
			n++
			if n == len(script) {
				cancel()
			}
			reasons := map[ledger.Outcome]ledger.Reason{K: ledger.ReasonStop, F: ledger.ReasonConnectionRefused, C: ledger.ReasonInjected}
			return ledger.Result{Outcome: o, Reason: reasons[o]}
		}
		const base = 20 * time.Millisecond
		b := Backoff{Base: base, Max: 10 * time.Second}
		if err := g.Closed(ctx, ClosedConfig{Users: 1, Window: time.Minute, Exec: exec, Backoff: b}); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		g.Drain(context.Background(), time.Second)
		checkLedger(t, led, col)
		rs := col.all()
		if len(rs) < len(script) {
			t.Fatalf("%d requests, want at least %d", len(rs), len(script))
		}
		for i, o := range script {
			if rs[i].Outcome != o {
				t.Fatalf("request %d: %s, want %s", i+1, rs[i].Outcome, o)
			}
		}
		// wait(i) is the pause after request i (1-based) before request i+1.
		wait := func(i int) time.Duration { return rs[i].Planned - rs[i-1].End }
		for i, min := range map[int]time.Duration{1: base, 2: 2 * base, 3: 4 * base, 4: 8 * base, 5: 16 * base, 7: base, 11: 16 * base} {
			if w := wait(i); w < min {
				t.Errorf("wait after request %d (%s): %v, want at least %v", i, rs[i-1].Outcome, w, min)
			}
		}
		long := wait(5) // after five consecutive failures: 16 × base
		if w := wait(7); w >= long {
			t.Errorf("wait after the first failure following a success: %v, not shorter than the %v after five failures: the success did not reset the backoff", w, long)
		}
		if w := wait(12); w >= long {
			t.Errorf("wait after a cancellation that followed five failures: %v, not shorter than the %v after five failures: a cancellation must not count as a failure", w, long)
		}
	})
}

// TestRetryBackoffJitter: a retry's wait is the failure backoff with its
// jitter: drawn from the seed and the arrival, within (d·(1−J), d],
// reproducible, spread across arrivals, and never below Retry-After.
func TestRetryBackoffJitter(t *testing.T) {
	r := Retry{MaxAttempts: 3, Backoff: time.Second, MaxBackoff: time.Second, Jitter: 0.5, Seed: 42}
	distinct := map[time.Duration]bool{}
	for key := range uint64(50) {
		d, ok := r.delay(1, key, 0)
		if !ok || d <= 500*time.Millisecond || d > time.Second {
			t.Fatalf("arrival %d: %v, %v: want a wait in (0.5s, 1s]", key, d, ok)
		}
		if again, _ := r.delay(1, key, 0); again != d {
			t.Fatalf("arrival %d: %v then %v: the jitter must be reproducible", key, d, again)
		}
		if d2, _ := r.delay(1, key, 900*time.Millisecond); d2 < 900*time.Millisecond {
			t.Errorf("arrival %d: %v below the server's Retry-After of 900ms", key, d2)
		}
		distinct[d] = true
	}
	if len(distinct) < 40 {
		t.Errorf("%d distinct waits over 50 arrivals: retries do not use the jitter", len(distinct))
	}
}

func TestClosedBackoffValidated(t *testing.T) {
	g, _, _ := newRun(t)
	err := g.Closed(context.Background(), ClosedConfig{Users: 1, Exec: okExec, Backoff: Backoff{Jitter: 2}})
	if err == nil || !strings.Contains(err.Error(), "jitter") {
		t.Errorf("err = %v, want the jitter named", err)
	}
	g.Drain(context.Background(), 0)
}
