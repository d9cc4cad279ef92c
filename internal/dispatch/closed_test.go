package dispatch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
)

func TestClosedLoop(t *testing.T) {
	g, led, col := newRun(t)
	const users = 4
	err := g.Closed(context.Background(), ClosedConfig{
		Users:  users,
		Think:  schedule.ThinkSpec{Kind: schedule.ThinkExponential, Mean: 2 * time.Millisecond},
		Seed:   1,
		Window: 150 * time.Millisecond,
		Meta:   func(time.Duration) ledger.Meta { return ledger.Meta{Mode: ledger.ModeOpen, User: 99, Class: "c"} },
		Exec:   sleepExec(5 * time.Millisecond),
	})
	if err != nil {
		t.Fatal(err)
	}
	g.Drain(context.Background(), time.Second)
	c := checkLedger(t, led, col)
	last := map[int]ledger.Record{}
	for _, r := range col.all() {
		if r.Mode != ledger.ModeClosed || r.User < 1 || r.User > users || r.Class != "c" {
			t.Fatalf("record %d: mode %s user %d class %q", r.ID, r.Mode, r.User, r.Class)
		}
		if lag, _ := r.DispatchLag(); lag > 200*time.Millisecond {
			t.Errorf("closed-loop record %d lag %v: planned is the send time", r.ID, lag)
		}
		if p, ok := last[r.User]; ok && r.Planned < p.End {
			t.Errorf("user %d sent record %d at %v before its previous one ended at %v", r.User, r.ID, r.Planned, p.End)
		}
		last[r.User] = r
	}
	if len(last) != users {
		t.Errorf("%d users sent requests, want %d", len(last), users)
	}
	// Each user's cycle is about 7ms: far fewer requests than an open loop
	// would send at the same nominal rate, and never more than one at a time.
	if most := users * int(150*time.Millisecond/(5*time.Millisecond)); c.Planned > most {
		t.Errorf("planned %d, more than %d users could send one at a time", c.Planned, users)
	}
}

// A slow target slows a closed loop down (the reason it is only for
// comparison), whereas an open loop keeps its schedule.
func TestClosedLoopSlowsWithTarget(t *testing.T) {
	count := func(d time.Duration) int {
		g, led, col := newRun(t)
		if err := g.Closed(context.Background(), ClosedConfig{Users: 2, Window: 120 * time.Millisecond, Exec: sleepExec(d)}); err != nil {
			t.Fatal(err)
		}
		g.Drain(context.Background(), time.Second)
		return checkLedger(t, led, col).Planned
	}
	fast, slow := count(2*time.Millisecond), count(40*time.Millisecond)
	if slow >= fast {
		t.Errorf("closed loop sent %d against a slow target and %d against a fast one", slow, fast)
	}
}

func TestClosedAdmitRefusalPauses(t *testing.T) {
	g, led, col := newRun(t)
	refuse := func(*ledger.Record) (ledger.Reason, bool) { return ledger.ReasonBudget, false }
	if err := g.Closed(context.Background(), ClosedConfig{Users: 2, Window: 250 * time.Millisecond, Admit: refuse, Exec: okExec}); err != nil {
		t.Fatal(err)
	}
	g.Drain(context.Background(), time.Second)
	c := checkLedger(t, led, col)
	// Zero think time: without the pause each user would spin.
	if c.Unsent == 0 || c.Unsent > 2*(1+int(250*time.Millisecond/MinPause)) {
		t.Errorf("unsent %d with %v pauses", c.Unsent, MinPause)
	}
}

func TestClosedConfigErrors(t *testing.T) {
	g, _, _ := newRun(t)
	for _, tc := range []struct {
		cfg  ClosedConfig
		want string
	}{
		{ClosedConfig{Exec: okExec}, "users must be ≥ 1"},
		{ClosedConfig{Users: 1}, "no executor"},
		{ClosedConfig{Users: 1, Exec: okExec, Think: schedule.ThinkSpec{Kind: schedule.ThinkLognormal, Mean: time.Second}}, "sigma"},
		{ClosedConfig{Users: 1, Exec: okExec, Window: -1}, "window"},
	} {
		if err := g.Closed(context.Background(), tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Closed: err = %v, want one containing %q", err, tc.want)
		}
	}
	g.Drain(context.Background(), 0)
}

// The window runs from Start, the caller's start (the one its report
// judges), not from the call: a caller that took its start and then spent
// time before calling Closed gets no request planned at or after
// Start+Window (before: the window ran from the call, and a busy host's
// delay put records past the report's window).
func TestClosedWindowFromStart(t *testing.T) {
	g, led, col := newRun(t)
	start := led.Now()
	const window = 150 * time.Millisecond
	time.Sleep(60 * time.Millisecond) // the caller's work between its start and the call
	err := g.Closed(context.Background(), ClosedConfig{
		Users: 2, Start: start, Window: window,
		Think: schedule.ThinkSpec{Kind: schedule.ThinkConstant, Mean: 2 * time.Millisecond},
		Exec:  sleepExec(5 * time.Millisecond),
	})
	if err != nil {
		t.Fatal(err)
	}
	g.Drain(context.Background(), time.Second)
	checkLedger(t, led, col)
	recs := col.all()
	if len(recs) == 0 {
		t.Fatal("no request planned")
	}
	for _, r := range recs {
		if r.Planned < start || r.Planned >= start+window {
			t.Errorf("record %d planned at %v, outside the window [%v, %v)", r.ID, r.Planned, start, start+window)
		}
	}
}
