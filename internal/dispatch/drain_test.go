package dispatch

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// Requests ending around the drain deadline race the censor: whichever
// claims the record first wins, each record ends exactly once, and the
// ledger records no violation.
func TestDrainRaceAtDeadline(t *testing.T) {
	for round := range 5 {
		g, led, col := newRun(t)
		rng := rand.New(rand.NewPCG(uint64(round), 1))
		durations := make(map[uint64]time.Duration)
		for i := uint64(1); i <= 400; i++ {
			durations[i] = time.Duration(rng.Int64N(int64(40 * time.Millisecond)))
		}
		exec := func(ctx context.Context, r *ledger.Record, dispatched func()) ledger.Result {
			return sleepExec(durations[r.ID])(ctx, r, dispatched)
		}
		if err := g.Open(context.Background(), OpenConfig{
			Arrivals: seq(t, schedule.Spec{Kind: schedule.Constant}, schedule.Step{Rate: 4000}), Window: 50 * time.Millisecond, Exec: exec,
		}); err != nil {
			t.Fatal(err)
		}
		censored := g.Drain(context.Background(), 15*time.Millisecond)
		c := checkLedger(t, led, col)
		if censored != c.ByOutcome[ledger.Censored] {
			t.Errorf("round %d: Drain returned %d censored, ledger has %d", round, censored, c.ByOutcome[ledger.Censored])
		}
		// A request whose goroutine had not sent it by the deadline is
		// never sent: unsent/shutdown (only under heavy machine load).
		if c.ByOutcome[ledger.OK]+c.ByOutcome[ledger.Censored]+c.ByOutcome[ledger.Unsent] != c.Planned {
			t.Errorf("round %d: outcomes %v, want only ok, censored and unsent", round, c.ByOutcome)
		}
		for _, r := range col.by(ledger.Unsent) {
			if r.Reason != ledger.ReasonShutdown {
				t.Errorf("round %d: record %d unsent/%s", round, r.ID, r.Reason)
			}
		}
	}
}

func TestDrainWaitsForFastRequests(t *testing.T) {
	g, led, col := newRun(t)
	if err := g.Open(context.Background(), OpenConfig{
		Arrivals: seq(t, schedule.Spec{Seed: 2}, schedule.Step{Rate: 300}), Window: 100 * time.Millisecond, Exec: sleepExec(20 * time.Millisecond),
	}); err != nil {
		t.Fatal(err)
	}
	if n := g.Drain(context.Background(), 10*time.Second); n != 0 {
		t.Errorf("censored %d requests that end in 20ms with a 10s deadline", n)
	}
	c := checkLedger(t, led, col)
	if c.ByOutcome[ledger.OK] != c.Planned || c.Planned == 0 {
		t.Errorf("ok %d of %d planned", c.ByOutcome[ledger.OK], c.Planned)
	}
}

// An interrupt before the deadline records what is in flight as
// cancelled/interrupted, not censored.
func TestDrainInterrupted(t *testing.T) {
	g, led, col := newRun(t)
	if err := g.Open(context.Background(), OpenConfig{
		Arrivals: seq(t, schedule.Spec{Kind: schedule.Constant}, schedule.Step{Rate: 200}), Window: 50 * time.Millisecond, Exec: blockExec,
	}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "every arrival is sent", func() bool { c := led.Counts(); return c.Dispatched == c.Planned })
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(5 * time.Millisecond)
		cancel()
	}()
	if n := g.Drain(ctx, time.Hour); n != 0 {
		t.Errorf("Drain censored %d on interrupt", n)
	}
	c := checkLedger(t, led, col)
	if c.Planned == 0 || c.ByOutcome[ledger.Cancelled] != c.Planned {
		t.Fatalf("outcomes %v, want all %d cancelled", c.ByOutcome, c.Planned)
	}
	for _, r := range col.all() {
		if r.Reason != ledger.ReasonInterrupted {
			t.Errorf("record %d: reason %s, want interrupted", r.ID, r.Reason)
		}
	}
}

// Drain with the stream still running stops it: nothing is planned after,
// and arrivals never leak past the drain.
func TestDrainStopsRunningStreams(t *testing.T) {
	g, led, col := newRun(t)
	done := make(chan error, 2)
	go func() {
		done <- g.Open(context.Background(), OpenConfig{Arrivals: seq(t, schedule.Spec{Seed: 5}, schedule.Step{Rate: 500}), Exec: sleepExec(5 * time.Millisecond)})
	}()
	go func() {
		done <- g.Closed(context.Background(), ClosedConfig{Users: 3, Think: schedule.ThinkSpec{Mean: time.Millisecond}, Exec: sleepExec(5 * time.Millisecond)})
	}()
	time.Sleep(60 * time.Millisecond)
	g.Drain(context.Background(), time.Second)
	for range 2 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	before := led.Counts().Attempts
	time.Sleep(20 * time.Millisecond)
	c := checkLedger(t, led, col)
	if c.Attempts != before || c.Planned == 0 {
		t.Errorf("attempts %d after the drain, %d at its end", c.Attempts, before)
	}
}

// With the context already cancelled, an interrupt wins over a deadline
// that is also due.
func TestDrainInterruptWinsOverDueDeadline(t *testing.T) {
	for range 20 {
		g, led, col := newRun(t)
		if err := g.Open(context.Background(), OpenConfig{
			Arrivals: seq(t, schedule.Spec{Kind: schedule.Constant}, schedule.Step{Rate: 1000}), Window: 5 * time.Millisecond, Exec: blockExec,
		}); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, 10*time.Second, "every arrival is sent", func() bool { c := led.Counts(); return c.Dispatched == c.Planned })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if n := g.Drain(ctx, 0); n != 0 {
			t.Fatalf("censored %d with the context cancelled", n)
		}
		c := checkLedger(t, led, col)
		if c.ByOutcome[ledger.Cancelled] != c.Planned {
			t.Fatalf("outcomes %v, want all cancelled", c.ByOutcome)
		}
	}
}
