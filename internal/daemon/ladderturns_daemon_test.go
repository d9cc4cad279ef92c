package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestDaemonLaddersTakeTurns: several targets whose ladders fall due
// together (an identity change each, while the test holds every turn)
// queue in /metrics, in the log and on the status page ("ladder queued:
// N ahead of it"), keep their trigger, run at most
// limits.max_concurrent_ladders at once (from the ladder records'
// planned times: a ladder plans its arrivals only while it holds a turn)
// and all run in the end.
func TestDaemonLaddersTakeTurns(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: daemon ladders in real time")
	}
	for _, tc := range []struct{ targets, limit int }{{4, 1}, {5, 2}} {
		t.Run(fmt.Sprintf("%d targets, %d at once", tc.targets, tc.limit), func(t *testing.T) {
			fake := newFakeTarget(t)
			const ladderYAML = `    ladder:
      enabled: true
      run_on_identity_change: true
      steps: [5]
      step_duration: 1s
      gap: 100ms
      max_rate: 50
      max_lag_p99: 1s
      abort: {on_generator_invalid: false}
`
			var targets []string
			for i := range tc.targets {
				targets = append(targets, targetYAML(fmt.Sprintf("t%d", i), fake.url, 1, ladderYAML))
			}
			yaml := configYAML("2s", targets...) + fmt.Sprintf("\nlimits: {max_concurrent_ladders: %d}\n", tc.limit)
			logs := &testutil.SyncBuffer{}
			sink := &recSink{}
			r := startDaemon(t, loadConfig(t, yaml), func(o *Options) {
				o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
				o.Sinks = append(o.Sinks, sink)
			})
			// The test holds every turn, so every ladder that falls due queues.
			var held []func()
			for range tc.limit {
				rel, err := r.d.turns.acquire(context.Background(), "test", nil)
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, rel)
			}
			r.d.mu.Lock()
			var runs []*targetRun
			for _, run := range r.d.targets {
				runs = append(runs, run)
			}
			r.d.mu.Unlock()
			for _, run := range runs {
				run.trigger <- "identity_change"
			}
			waitFor(t, 10*time.Second, "every ladder queued in /metrics", func() bool {
				m := r.metrics(t)
				running, _ := sum(m, "llmprobe_ladders_running")
				waiting, _ := sum(m, "llmprobe_ladders_waiting")
				return int(running) == tc.limit && int(waiting) == tc.targets
			})
			var aheads []int
			for _, ts := range r.d.status().Targets {
				var n int
				if _, err := fmt.Sscanf(ts.State, "ladder queued: %d ahead of it (identity_change, due since", &n); err != nil {
					t.Fatalf("%s: state %q, want a queued ladder keeping its trigger", ts.Name, ts.State)
				}
				aheads = append(aheads, n)
			}
			slices.Sort(aheads)
			for i, n := range aheads {
				if n != i {
					t.Fatalf("ahead counts %v, want 0..%d once each", aheads, tc.targets-1)
				}
			}
			for _, rel := range held {
				rel()
			}
			waitFor(t, 60*time.Second, "every ladder to finish", func() bool {
				r.d.mu.Lock()
				defer r.d.mu.Unlock()
				return len(r.d.last) == tc.targets
			})
			r.d.mu.Lock()
			for name, res := range r.d.last {
				if res.Trigger != "identity_change" {
					t.Errorf("%s ran as %q, want its trigger identity_change kept", name, res.Trigger)
				}
			}
			r.d.mu.Unlock()
			if err := r.stop(t); err != nil {
				t.Fatal(err)
			}
			peak := peakOverlap(ladderSpans(sink))
			t.Logf("peak ladders at once (planned times): %d of limit %d", peak, tc.limit)
			if peak < 1 || peak > tc.limit {
				t.Errorf("peak %d ladders at once, want 1..%d", peak, tc.limit)
			}
			if got := strings.Count(logs.String(), "ladder queued: waiting its turn"); got != tc.targets {
				t.Errorf("%d queued log lines, want %d:\n%s", got, tc.targets, logs.String())
			}
		})
	}
}

// ladderSpans are each target's ladder planned times, first to last.
func ladderSpans(s *recSink) map[string][2]time.Duration {
	spans := map[string][2]time.Duration{}
	for _, rec := range s.where(func(r seen) bool { return r.traffic == ledger.TrafficLadder }) {
		sp, ok := spans[rec.target]
		if !ok {
			sp = [2]time.Duration{rec.planned, rec.planned}
		}
		sp[0], sp[1] = min(sp[0], rec.planned), max(sp[1], rec.planned)
		spans[rec.target] = sp
	}
	return spans
}

// peakOverlap is the most spans that share an instant.
func peakOverlap(spans map[string][2]time.Duration) int {
	type edge struct {
		at    time.Duration
		delta int
	}
	var edges []edge
	for _, sp := range spans {
		edges = append(edges, edge{sp[0], 1}, edge{sp[1], -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return b.delta - a.delta // a start before an end at the same instant: counted as overlap
	})
	now, peak := 0, 0
	for _, e := range edges {
		now += e.delta
		peak = max(peak, now)
	}
	return peak
}

// TestDaemonLadderQueueCancelled: ladders waiting their turn leave the
// queue when a reload replaces their runs and when the daemon shuts down,
// holding no turn and leaking no goroutine (goleak, TestMain); a reload
// applies a new limits.max_concurrent_ladders.
func TestDaemonLadderQueueCancelled(t *testing.T) {
	fake := newFakeTarget(t)
	const ladderYAML = `    ladder:
      enabled: true
      run_on_identity_change: true
      steps: [5]
      step_duration: 1s
`
	cfgYAML := func(limit int) string {
		return configYAML("1s", targetYAML("a", fake.url, 0.5, ladderYAML), targetYAML("b", fake.url, 0.5, ladderYAML)) +
			fmt.Sprintf("\nlimits: {max_concurrent_ladders: %d}\n", limit)
	}
	r := startDaemon(t, loadConfig(t, cfgYAML(1)), nil)
	hold, err := r.d.turns.acquire(context.Background(), "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold()
	queueAll := func() {
		t.Helper()
		r.d.mu.Lock()
		for _, run := range r.d.targets {
			run.trigger <- "identity_change"
		}
		r.d.mu.Unlock()
		waitFor(t, 10*time.Second, "both ladders queued", func() bool {
			_, waiting := r.d.turns.counts()
			return waiting == 2
		})
	}
	queueAll()
	r.mustReload(t, loadConfig(t, cfgYAML(3)))
	waitFor(t, 10*time.Second, "the replaced runs' ladders to leave the queue", func() bool {
		_, waiting := r.d.turns.counts()
		return waiting == 0
	})
	r.d.turns.mu.Lock()
	if limit := r.d.turns.limit; limit != 3 {
		t.Errorf("limit %d after the reload, want 3", limit)
	}
	r.d.turns.mu.Unlock()
	r.mustReload(t, loadConfig(t, cfgYAML(1)))
	waitFor(t, 10*time.Second, "the limit back at 1", func() bool {
		r.d.turns.mu.Lock()
		defer r.d.turns.mu.Unlock()
		return r.d.turns.limit == 1
	})
	queueAll()
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if running, waiting := r.d.turns.counts(); running != 1 || waiting != 0 {
		t.Errorf("after shutdown %d running (the test's), %d waiting; want 1, 0", running, waiting)
	}
}
