package dispatch

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
)

// sessionsOf groups records by session, each session's records by turn.
func sessionsOf(t *testing.T, recs []ledger.Record) map[uint64]map[int]ledger.Record {
	t.Helper()
	out := map[uint64]map[int]ledger.Record{}
	for _, r := range recs {
		if r.Session == 0 || r.Turn < 1 {
			t.Fatalf("record %d: session %d turn %d: every record of a session stream is a turn", r.ID, r.Session, r.Turn)
		}
		if out[r.Session] == nil {
			out[r.Session] = map[int]ledger.Record{}
		}
		if _, dup := out[r.Session][r.Turn]; dup && !r.IsRetry() {
			t.Fatalf("session %d turn %d recorded twice", r.Session, r.Turn)
		}
		if !r.IsRetry() {
			out[r.Session][r.Turn] = r
		}
	}
	return out
}

// endSessions waits for a run's sessions to end (failing the test after
// 10s), drains the group, checks the ledger and returns sessionsOf its
// records.
func endSessions(t *testing.T, g *Group, led *ledger.Ledger, col *collector) map[uint64]map[int]ledger.Record {
	t.Helper()
	if !g.AwaitSessions(context.Background(), 10*time.Second) {
		t.Fatal("sessions did not end within 10s")
	}
	g.Drain(context.Background(), time.Second)
	checkLedger(t, led, col)
	return sessionsOf(t, col.all())
}

// Every session leaves one record per turn: turns after one that failed
// are unsent/session_aborted, never missing; turns are planned one think
// time after the previous turn ended, and carry their session's start.
func TestSessionsNoHoles(t *testing.T) {
	const turns = 4
	tests := []struct {
		name     string
		failTurn int // the turn every session fails at (0: none)
		unsent   func(r ledger.Record) bool
	}{
		{"all ok", 0, func(ledger.Record) bool { return false }},
		{"turn 2 fails", 2, func(r ledger.Record) bool { return r.Turn > 2 }},
		{"turn 1 fails", 1, func(r ledger.Record) bool { return r.Turn > 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, led, col := newRun(t)
			var mu sync.Mutex
			ended := map[uint64]int{}
			exec := func(_ context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
				dispatched()
				time.Sleep(time.Millisecond)
				if rec.Turn == tc.failTurn {
					return ledger.Result{Outcome: ledger.HTTPError, Reason: ledger.ReasonServerError}
				}
				return ledger.Result{Outcome: ledger.OK, Reason: ledger.ReasonStop}
			}
			think := 5 * time.Millisecond
			err := g.Open(context.Background(), OpenConfig{
				Arrivals: seq(t, schedule.Spec{Kind: schedule.Constant}, schedule.Step{Rate: 100}),
				Window:   100 * time.Millisecond,
				Meta:     func(time.Duration) ledger.Meta { return ledger.Meta{Class: "chat"} },
				Exec:     exec,
				Session: &Session{Turns: turns, Think: schedule.ThinkSpec{Kind: schedule.ThinkConstant, Mean: think}, Seed: 1,
					End: func(id uint64) { mu.Lock(); ended[id]++; mu.Unlock() }},
			})
			if err != nil {
				t.Fatal(err)
			}
			byS := endSessions(t, g, led, col)
			if len(byS) != 10 {
				t.Errorf("%d sessions, want 10 (100/s over 100ms)", len(byS))
			}
			for id, ts := range byS {
				if len(ts) != turns {
					t.Errorf("session %d: %d turns recorded, want %d", id, len(ts), turns)
				}
				if ended[id] != 1 {
					t.Errorf("session %d: End called %d times, want 1", id, ended[id])
				}
				first := ts[1]
				if first.ID != id || first.SessionPlanned != 0 {
					t.Errorf("session %d: first turn is record %d with session start %v", id, first.ID, first.SessionPlanned)
				}
				for k := 2; k <= turns; k++ {
					r := ts[k]
					if r.SessionPlanned != first.Planned {
						t.Errorf("session %d turn %d: session start %v, want %v", id, k, r.SessionPlanned, first.Planned)
					}
					if tc.unsent(r) {
						if r.Outcome != ledger.Unsent || r.Reason != ledger.ReasonSessionAborted {
							t.Errorf("session %d turn %d: %s/%s, want unsent/session_aborted", id, k, r.Outcome, r.Reason)
						}
						continue
					}
					if prev := ts[k-1]; r.Planned < prev.End+think {
						t.Errorf("session %d turn %d planned at %v, before the previous end %v + think %v", id, k, r.Planned, prev.End, think)
					}
				}
			}
		})
	}
}

// A drain while sessions think ends their later turns unsent/shutdown.
func TestSessionsDrainShutsDown(t *testing.T) {
	g, led, col := newRun(t)
	err := g.Open(context.Background(), OpenConfig{
		Arrivals: seq(t, schedule.Spec{Kind: schedule.Constant}, schedule.Step{Rate: 100}),
		Window:   50 * time.Millisecond,
		Exec:     okExec,
		Session:  &Session{Turns: 3, Think: schedule.ThinkSpec{Mean: time.Hour}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if g.AwaitSessions(context.Background(), 20*time.Millisecond) {
		t.Fatal("sessions with an hour of think time ended")
	}
	g.Drain(context.Background(), time.Second)
	checkLedger(t, led, col)
	for id, ts := range sessionsOf(t, col.all()) {
		if len(ts) != 3 {
			t.Errorf("session %d: %d turns, want 3", id, len(ts))
		}
		for k := 2; k <= 3; k++ {
			if r := ts[k]; r.Outcome != ledger.Unsent || r.Reason != ledger.ReasonShutdown {
				t.Errorf("session %d turn %d: %s/%s, want unsent/shutdown", id, k, r.Outcome, r.Reason)
			}
		}
	}
}

func TestSessionValidate(t *testing.T) {
	for _, turns := range []int{0, 1, MaxSessionTurns + 1} {
		err := NewGroup(ledger.New(time.Now())).Open(context.Background(), OpenConfig{
			Arrivals: seq(t, schedule.Spec{Kind: schedule.Constant}, schedule.Step{Rate: 1}), Exec: okExec,
			Session: &Session{Turns: turns},
		})
		if err == nil {
			t.Errorf("turns %d accepted", turns)
		}
	}
}

// Every turn is admitted (a budget) at its planned time, and a turn the
// budget refuses ends its session: the later turns are session_aborted.
func TestSessionsAdmitEachTurn(t *testing.T) {
	g, led, col := newRun(t)
	var mu sync.Mutex
	admitted := map[int]int{} // by turn
	err := g.Open(context.Background(), OpenConfig{
		Arrivals: seq(t, schedule.Spec{Kind: schedule.Constant}, schedule.Step{Rate: 100}),
		Window:   50 * time.Millisecond,
		Exec:     okExec,
		Admit: func(rec *ledger.Record) (ledger.Reason, bool) {
			mu.Lock()
			defer mu.Unlock()
			if rec.Turn == 3 {
				return ledger.ReasonBudget, false
			}
			admitted[rec.Turn]++
			return "", true
		},
		Session: &Session{Turns: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	byS := endSessions(t, g, led, col)
	mu.Lock()
	defer mu.Unlock()
	if admitted[1] != len(byS) || admitted[2] != len(byS) || admitted[4] != 0 {
		t.Errorf("admitted by turn %v for %d sessions: want every turn 1 and 2, no turn 4", admitted, len(byS))
	}
	for id, ts := range byS {
		if r := ts[3]; r.Reason != ledger.ReasonBudget {
			t.Errorf("session %d turn 3: %s/%s, want unsent/budget", id, r.Outcome, r.Reason)
		}
		if r := ts[4]; r.Reason != ledger.ReasonSessionAborted {
			t.Errorf("session %d turn 4: %s/%s, want unsent/session_aborted", id, r.Outcome, r.Reason)
		}
	}
}

// A session stream stopped (ctx done, or the group drains) while its
// generator is behind schedule ends each session that fell due before the
// stop as a session: its first turn and its later turns unsent/shutdown,
// End called once, no plain record. A drain leaves no session to be
// recorded after it returns.
func TestSessionsStopBehindScheduleLeavesNoHole(t *testing.T) {
	const turns, stopAt = 3, 3
	for _, how := range []string{"ctx", "drain"} {
		t.Run(how, func(t *testing.T) {
			col := &collector{}
			led := ledger.New(time.Now().Add(-500*time.Millisecond), col) // the whole first 0.5s is due
			g := NewGroup(led)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// Sessions think an hour: before the stop only Open calls meta
			// (the sessions' goroutines do when they end, concurrently).
			var n atomic.Int32
			meta := func(time.Duration) ledger.Meta {
				if n.Add(1) == stopAt {
					if how == "ctx" {
						cancel()
					} else {
						g.Drain(context.Background(), time.Second)
					}
				}
				return ledger.Meta{Class: "chat"}
			}
			var mu sync.Mutex
			ended := map[uint64]int{}
			if err := g.Open(ctx, OpenConfig{
				Arrivals: seq(t, schedule.Spec{Kind: schedule.Constant}, schedule.Step{Rate: 100}),
				Start:    time.Nanosecond, Window: 2 * time.Second, Exec: okExec, Meta: meta,
				Session: &Session{Turns: turns, Think: schedule.ThinkSpec{Mean: time.Hour},
					End: func(id uint64) { mu.Lock(); ended[id]++; mu.Unlock() }},
			}); err != nil {
				t.Fatal(err)
			}
			if how == "drain" {
				for id, ts := range sessionsOf(t, col.all()) {
					if len(ts) != turns {
						t.Errorf("after the drain: session %d has %d turns, want %d", id, len(ts), turns)
					}
				}
			}
			g.Drain(context.Background(), time.Second)
			checkLedger(t, led, col)
			abandoned := 0
			for id, ts := range sessionsOf(t, col.all()) {
				if len(ts) != turns {
					t.Errorf("session %d: %d turns, want %d", id, len(ts), turns)
				}
				if first := ts[1]; first.Outcome == ledger.Unsent {
					abandoned++
					for k := 1; k <= turns; k++ {
						if r := ts[k]; r.Outcome != ledger.Unsent || r.Reason != ledger.ReasonShutdown {
							t.Errorf("abandoned session %d turn %d: %s/%s, want unsent/shutdown", id, k, r.Outcome, r.Reason)
						}
					}
				}
				mu.Lock()
				if ended[id] != 1 {
					t.Errorf("session %d: End called %d times, want 1", id, ended[id])
				}
				mu.Unlock()
			}
			if abandoned == 0 {
				t.Error("no session fell due before the stop: the test did not exercise abandonDue")
			}
		})
	}
}
