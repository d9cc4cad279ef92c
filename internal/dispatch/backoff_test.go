package dispatch

import (
	"context"
	"strings"
	"sync"
	"testing"
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
func failExec(_ context.Context, _ *ledger.Record, dispatched func()) Result {
	dispatched()
	return Result{Outcome: ledger.TransportError, Reason: ledger.ReasonConnectionRefused, Err: "connection refused"}
}

// TestClosedLoopBacksOffFailures (issue 8, defect 6): closed-loop users
// with no think time against a target that fails every request at once do
// not send the next request at once: each waits the failure backoff (100 ms
// doubling), so in a second a user sends a handful of requests, not
// thousands. (An upper bound on a count: a slow machine sends fewer.)
func TestClosedLoopBacksOffFailures(t *testing.T) {
	g, led, col := newRun(t)
	const users, window = 4, time.Second
	if err := g.Closed(context.Background(), ClosedConfig{Users: users, Window: window, Exec: failExec}); err != nil {
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
}

// TestClosedLoopBackoffResetsOnSuccess: a success resets the backoff, and
// outcomes that are not the target's failures (a cancellation) never
// start one.
func TestClosedLoopBackoffResetsOnSuccess(t *testing.T) {
	g, led, col := newRun(t)
	var mu sync.Mutex
	n := 0
	// fail, fail, ok, fail, cancelled, ok, ok, …
	script := []ledger.Outcome{ledger.TransportError, ledger.TransportError, ledger.OK, ledger.Rejected, ledger.Cancelled}
	exec := func(_ context.Context, r *ledger.Record, dispatched func()) Result {
		dispatched()
		mu.Lock()
		defer mu.Unlock()
		o := ledger.OK
		if n < len(script) {
			o = script[n]
		}
		n++
		reasons := map[ledger.Outcome]ledger.Reason{ledger.OK: ledger.ReasonStop, ledger.TransportError: ledger.ReasonConnectionRefused,
			ledger.Rejected: ledger.ReasonStatus429, ledger.Cancelled: ledger.ReasonInjected}
		return Result{Outcome: o, Reason: reasons[o]}
	}
	b := Backoff{Base: 40 * time.Millisecond, Max: time.Second}
	if err := g.Closed(context.Background(), ClosedConfig{Users: 1, Window: 400 * time.Millisecond, Exec: exec, Backoff: b}); err != nil {
		t.Fatal(err)
	}
	g.Drain(context.Background(), time.Second)
	checkLedger(t, led, col)
	rs := col.all()
	if len(rs) < 7 {
		t.Fatalf("%d requests, want at least 7 (successes are not delayed)", len(rs))
	}
	// The wait before request i+1 is at least the backoff after request i.
	for i, min := range []time.Duration{40 * time.Millisecond, 80 * time.Millisecond, 0, 40 * time.Millisecond} {
		if gap := rs[i+1].Planned - rs[i].End; gap < min {
			t.Errorf("gap after request %d (%s): %v, want at least %v", i+1, rs[i].Outcome, gap, min)
		}
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
