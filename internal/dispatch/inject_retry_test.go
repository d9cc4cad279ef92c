package dispatch

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
)

func TestInjectedCancellation(t *testing.T) {
	g, led, col := newRun(t)
	exec, err := Inject(Injection{Fraction: 0.3, Delay: 2 * time.Millisecond, MaxDelay: 4 * time.Millisecond, Seed: 7}, sleepExec(60*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Open(context.Background(), OpenConfig{
		Arrivals: seq(t, schedule.Spec{Kind: schedule.Constant}, schedule.Step{Rate: 1000}), Window: 200 * time.Millisecond, Exec: exec,
	}); err != nil {
		t.Fatal(err)
	}
	g.Drain(context.Background(), 5*time.Second)
	c := checkLedger(t, led, col)
	n := float64(c.Planned)
	got := float64(c.ByOutcome[ledger.Cancelled])
	if tol := 5 * math.Sqrt(n*0.3*0.7); math.Abs(got-0.3*n) > tol {
		t.Errorf("%v of %v cancelled, want %.0f ± %.0f", got, n, 0.3*n, tol)
	}
	if c.ByOutcome[ledger.OK]+c.ByOutcome[ledger.Cancelled] != c.Planned {
		t.Errorf("outcomes %v, want ok and cancelled only", c.ByOutcome)
	}
	for _, r := range col.by(ledger.Cancelled) {
		if r.Reason != ledger.ReasonInjected {
			t.Errorf("record %d: reason %s, want injected", r.ID, r.Reason)
		}
		if d := r.End - r.Dispatched; d < 2*time.Millisecond {
			t.Errorf("record %d cancelled %v after dispatch, before the 2ms delay", r.ID, d)
		}
	}
}

// Which requests are cancelled is a pure function of (seed, record ID). In a
// synctest bubble (no socket, only timers): the injected cancellation (at
// dispatch) always comes before the 30 ms answer, as it does on a real clock
// unless a busy host holds the timer's goroutine past 30 ms.
func TestInjectionIsSeeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		chosen := func(seed uint64) map[uint64]bool {
			exec, err := Inject(Injection{Fraction: 0.5, Seed: seed}, sleepExec(30*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			out := map[uint64]bool{}
			var wg sync.WaitGroup
			for id := uint64(1); id <= 200; id++ {
				wg.Go(func() {
					res := exec(context.Background(), &ledger.Record{ID: id}, func() {})
					mu.Lock()
					out[id] = res.Outcome == ledger.Cancelled
					mu.Unlock()
				})
			}
			wg.Wait()
			return out
		}
		a, b, c := chosen(1), chosen(1), chosen(2)
		same, differ, n := true, false, 0
		for id := range a {
			same = same && a[id] == b[id]
			differ = differ || a[id] != c[id]
			if a[id] {
				n++
			}
		}
		if !same || !differ || n < 60 || n > 140 {
			t.Errorf("same seed same choice %v, other seed differs %v, chosen %d of 200", same, differ, n)
		}
	})
}

// A chosen request that completes before its cancel lands keeps its ok.
func TestInjectionLosesToCompletion(t *testing.T) {
	exec, err := Inject(Injection{Fraction: 1, Delay: time.Hour}, okExec)
	if err != nil {
		t.Fatal(err)
	}
	if res := exec(context.Background(), &ledger.Record{ID: 1}, func() {}); res.Outcome != ledger.OK {
		t.Errorf("outcome %s, want ok", res.Outcome)
	}
}

func TestInjectionErrors(t *testing.T) {
	for _, tc := range []struct {
		in   Injection
		next Exec
		want string
	}{
		{Injection{Fraction: 1.5}, okExec, "fraction"},
		{Injection{Fraction: math.NaN()}, okExec, "fraction"},
		{Injection{Fraction: 0.1, Delay: -1}, okExec, "delay"},
		{Injection{Fraction: 0.1}, nil, "no executor"},
	} {
		if _, err := Inject(tc.in, tc.next); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Inject(%+v): err = %v, want one containing %q", tc.in, err, tc.want)
		}
	}
}

// rejectThenOK rejects the first attempts of every arrival with a
// Retry-After, then answers ok.
func rejectThenOK(okAt int, retryAfter time.Duration) Exec {
	return func(_ context.Context, r *ledger.Record, dispatched func()) ledger.Result {
		dispatched()
		if r.Attempt < okAt {
			r.Status, r.RetryAfter = 429, retryAfter
			return ledger.Result{Outcome: ledger.Rejected, Reason: ledger.ReasonStatus429}
		}
		return ledger.Result{Outcome: ledger.OK, Reason: ledger.ReasonStop}
	}
}

func TestRetriesAreAttemptsNotDemand(t *testing.T) {
	for _, mode := range []string{"open", "closed"} {
		t.Run(mode, func(t *testing.T) {
			g, led, col := newRun(t)
			retry := Retry{MaxAttempts: 3, Backoff: time.Millisecond}
			exec := rejectThenOK(3, 3*time.Millisecond)
			meta := func(time.Duration) ledger.Meta {
				return ledger.Meta{Target: "t", Class: "c", TTFTBoundary: ledger.TTFTAnyToken, During: ledger.DuringLadder}
			}
			var err error
			if mode == "open" {
				err = g.Open(context.Background(), OpenConfig{
					Arrivals: seq(t, schedule.Spec{Kind: schedule.Constant}, schedule.Step{Rate: 200}), Window: 100 * time.Millisecond, Exec: exec, Retry: retry,
					Meta: meta,
				})
			} else {
				err = g.Closed(context.Background(), ClosedConfig{Users: 2, Window: 60 * time.Millisecond, Exec: exec, Retry: retry, Meta: meta})
			}
			if err != nil {
				t.Fatal(err)
			}
			g.Drain(context.Background(), 5*time.Second)
			c := checkLedger(t, led, col)
			n := c.Planned
			if n == 0 || c.Attempts != 3*n || c.ByOutcome[ledger.Rejected] != 2*n || c.ByOutcome[ledger.OK] != n {
				t.Fatalf("planned %d attempts %d outcomes %v; want attempts 3×planned, 2 rejections and 1 ok each", n, c.Attempts, c.ByOutcome)
			}
			byAttempt := map[int]int{}
			prev := map[uint64]ledger.Record{}
			for _, r := range col.all() {
				byAttempt[r.Attempt]++
				if r.Target != "t" || r.Class != "c" {
					t.Errorf("retry record %d lost its meta: %+v", r.ID, r)
				}
				if r.TTFTBoundary != ledger.TTFTAnyToken {
					t.Errorf("record %d (attempt %d) lost its TTFT boundary: %q", r.ID, r.Attempt, r.TTFTBoundary)
				}
				if r.During != ledger.DuringLadder {
					t.Errorf("record %d (attempt %d) lost its during label: %q", r.ID, r.Attempt, r.During)
				}
				if r.Attempt <= 1 {
					if r.RetryOf != 0 || r.FirstPlanned != 0 {
						t.Errorf("first attempt %d has retry_of %d, first_planned %v; want both 0", r.ID, r.RetryOf, r.FirstPlanned)
					}
				} else {
					// The attempt it repeats finished before it was planned.
					p, ok := prev[r.RetryOf]
					switch {
					case !ok:
						t.Errorf("attempt %d (record %d) retries record %d, which had not finished", r.Attempt, r.ID, r.RetryOf)
					case p.Attempt != r.Attempt-1 || p.User != r.User || r.Planned < p.End+p.RetryAfter:
						t.Errorf("attempt %d (record %d, planned %v) joined to record %d (attempt %d, ended %v, retry-after %v)",
							r.Attempt, r.ID, r.Planned, p.ID, p.Attempt, p.End, p.RetryAfter)
					case r.FirstPlanned != p.ArrivalPlanned() || r.FirstPlanned >= r.Planned:
						t.Errorf("attempt %d (record %d): first planned %v, want its chain's first planned %v (before its own %v)",
							r.Attempt, r.ID, r.FirstPlanned, p.ArrivalPlanned(), r.Planned)
					}
					if p.Attempt == 1 && r.FirstPlanned != p.Planned {
						t.Errorf("record %d: first planned %v, first attempt %d planned at %v", r.ID, r.FirstPlanned, p.ID, p.Planned)
					}
				}
				prev[r.ID] = r
			}
			if byAttempt[1] != n || byAttempt[2] != n || byAttempt[3] != n {
				t.Errorf("records by attempt %v, want %d each of 1, 2, 3", byAttempt, n)
			}
		})
	}
}

func TestRetryPolicy(t *testing.T) {
	r := Retry{MaxAttempts: 4, Backoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	for _, tc := range []struct {
		n          int
		retryAfter time.Duration
		want       time.Duration
		ok         bool
	}{
		{1, 0, 10 * time.Millisecond, true},
		{2, 0, 20 * time.Millisecond, true},
		{3, 0, 40 * time.Millisecond, true},
		{5, 0, 50 * time.Millisecond, true},
		{1, 30 * time.Millisecond, 30 * time.Millisecond, true},
		{1, time.Second, 0, false},
	} {
		got, ok := r.delay(tc.n, 7, tc.retryAfter)
		if got != tc.want || ok != tc.ok {
			t.Errorf("delay(%d, %v) = %v, %v; want %v, %v", tc.n, tc.retryAfter, got, ok, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		r    Retry
		o    ledger.Outcome
		n    int
		want bool
	}{
		{Retry{}, ledger.Rejected, 1, false},
		{r, ledger.Rejected, 1, true},
		{r, ledger.TransportError, 3, true},
		{r, ledger.TransportError, 4, false},
		{r, ledger.Timeout, 1, false},
		{Retry{MaxAttempts: 2, On: []ledger.Outcome{ledger.Timeout}}, ledger.Timeout, 1, true},
		{Retry{MaxAttempts: 2, On: []ledger.Outcome{ledger.Timeout}}, ledger.Rejected, 1, false},
	} {
		if got := tc.r.retryable(tc.o, tc.n); got != tc.want {
			t.Errorf("%+v.retryable(%s, %d) = %v, want %v", tc.r, tc.o, tc.n, got, tc.want)
		}
	}
}

// A Retry-After longer than the policy allows is honoured by not retrying;
// the drain deadline abandons pending retries without planning them.
func TestRetryNotPlannedWhenHonouringOrDraining(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter time.Duration
		backoff    time.Duration
	}{{"retry-after too long", 3 * time.Hour, time.Millisecond}, {"drain during backoff", 0, time.Hour}} {
		t.Run(tc.name, func(t *testing.T) {
			g, led, col := newRun(t)
			if err := g.Open(context.Background(), OpenConfig{
				Arrivals: seq(t, schedule.Spec{Kind: schedule.Constant}, schedule.Step{Rate: 200}), Window: 50 * time.Millisecond,
				Exec: rejectThenOK(99, tc.retryAfter), Retry: Retry{MaxAttempts: 3, Backoff: tc.backoff, MaxBackoff: 2 * time.Hour},
			}); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if n := g.Drain(context.Background(), 50*time.Millisecond); n != 0 {
				t.Errorf("Drain censored %d: a retry in backoff is not in flight", n)
			}
			if el := time.Since(start); el > 10*time.Second {
				t.Errorf("Drain waited %v for retries", el)
			}
			c := checkLedger(t, led, col)
			if c.Attempts != c.Planned || c.ByOutcome[ledger.Rejected] != c.Planned {
				t.Errorf("planned %d attempts %d outcomes %v: want no retries", c.Planned, c.Attempts, c.ByOutcome)
			}
		})
	}
}

// A retry asks Admit like any request: a spent budget stops retries too,
// and the refused retry is recorded unsent with the budget's reason.
func TestRetriesAskAdmit(t *testing.T) {
	g, led, col := newRun(t)
	var mu sync.Mutex
	admitted := 0
	admit := func(*ledger.Record) (ledger.Reason, bool) {
		mu.Lock()
		defer mu.Unlock()
		if admitted >= 1 {
			return ledger.ReasonBudget, false
		}
		admitted++
		return "", true
	}
	err := g.Open(context.Background(), OpenConfig{
		Arrivals: seq(t, schedule.Spec{Kind: schedule.Constant}, schedule.Step{Rate: 100}), Window: 15 * time.Millisecond,
		Exec: rejectThenOK(3, time.Millisecond), Retry: Retry{MaxAttempts: 3, Backoff: time.Millisecond}, Admit: admit,
		Meta: func(time.Duration) ledger.Meta { return ledger.Meta{Target: "t", Class: "c"} },
	})
	if err != nil {
		t.Fatal(err)
	}
	g.Drain(context.Background(), 5*time.Second)
	c := checkLedger(t, led, col)
	if c.Planned != 1 || c.Attempts != 2 || c.ByOutcome[ledger.Rejected] != 1 || c.ByOutcome[ledger.Unsent] != 1 {
		t.Fatalf("planned %d attempts %d outcomes %v: want one rejected first attempt and one retry refused by the budget", c.Planned, c.Attempts, c.ByOutcome)
	}
	for _, r := range col.all() {
		if r.Attempt == 2 && (r.Outcome != ledger.Unsent || r.Reason != ledger.ReasonBudget) {
			t.Fatalf("retry ended %s/%s, want unsent/budget", r.Outcome, r.Reason)
		}
	}
}

// A retry meets the stream's in-flight cap like any request: a full cap
// ends it unsent/client_cap (and its chain); an Admit that refuses a retry
// with a reason outside the unsent set ends it unsent/shutdown.
func TestRetryRefusedByCapOrBadAdmit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cap   int
		admit Admit
		want  ledger.Reason
	}{
		{"cap full", 1, nil, ledger.ReasonClientCap},
		{"bad admit reason", 0, func(r *ledger.Record) (ledger.Reason, bool) {
			if r.Attempt > 1 {
				return ledger.ReasonStop, false // not an unsent reason
			}
			return "", true
		}, ledger.ReasonShutdown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const retryAfter = 150 * time.Millisecond
			g, led, col := newRun(t)
			var calls sync.Mutex
			n := 0
			// The first attempt of the first arrival is rejected with a
			// retry-after (150ms); every other request holds its slot for
			// 600ms, so the second arrival (10ms later) fills the cap when
			// the retry comes due.
			exec := func(ctx context.Context, r *ledger.Record, dispatched func()) ledger.Result {
				dispatched()
				calls.Lock()
				n++
				first := n == 1
				calls.Unlock()
				if first {
					r.RetryAfter = retryAfter
					return ledger.Result{Outcome: ledger.Rejected, Reason: ledger.ReasonStatus429}
				}
				return sleepExec(600*time.Millisecond)(ctx, r, func() {})
			}
			if err := g.Open(context.Background(), OpenConfig{
				Arrivals: seq(t, schedule.Spec{Kind: schedule.Constant}, schedule.Step{Rate: 100}), Window: 25 * time.Millisecond,
				MaxInFlight: tc.cap, Admit: tc.admit, Exec: exec, Retry: Retry{MaxAttempts: 3, Backoff: time.Millisecond},
			}); err != nil {
				t.Fatal(err)
			}
			g.Drain(context.Background(), 5*time.Second)
			c := checkLedger(t, led, col)
			if c.Planned != 2 || c.Attempts != 3 || c.ByOutcome[ledger.Rejected] != 1 || c.ByOutcome[ledger.OK] != 1 || c.ByOutcome[ledger.Unsent] != 1 {
				t.Fatalf("planned %d attempts %d outcomes %v: want two arrivals, one rejection, one ok, one retry unsent", c.Planned, c.Attempts, c.ByOutcome)
			}
			for _, r := range col.by(ledger.Unsent) {
				if r.Attempt == 1 && r.End-r.Planned >= retryAfter {
					// A busy host held the second arrival past the
					// retry's due time: the retry took the slot first.
					t.Skipf("the second arrival was refused %v after its planned time, after the retry was due (%v): the host was too slow for the order this test needs", r.End-r.Planned, retryAfter)
				}
				if r.Attempt != 2 || r.Reason != tc.want {
					t.Errorf("unsent record: attempt %d reason %s, want the retry (attempt 2) unsent/%s", r.Attempt, r.Reason, tc.want)
				}
			}
		})
	}
}
