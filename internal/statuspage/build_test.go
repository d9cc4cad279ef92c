package statuspage

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/fleet"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestBuild: the page is laid out from the daemon's view alone: targets
// worst first, the generator verdict with its causes and what to do, a target
// without memory as no data, failures bounded, the last ladder's capacity,
// and the fleet's role on every card.
func TestBuild(t *testing.T) {
	now := time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC)
	mem := NewMemory()
	for range 50 {
		mem.Record(now, &ledger.Record{Target: "a", Class: "chat", Traffic: ledger.TrafficBaseline, Outcome: ledger.OK, Reason: ledger.ReasonStop,
			Planned: time.Second, Dispatched: time.Second, Headers: 2 * time.Second, FirstContent: 2 * time.Second, End: 3 * time.Second}, stats.Gates{})
	}
	var fails []Failure
	for i := range MaxFailures + 3 {
		fails = append(fails, Failure{When: now, Outcome: "rejected", Reason: fmt.Sprint("status_", 500+i)})
	}
	last := &ladder.Result{Finished: now.Add(-time.Minute), Verdict: ladderresult.Verdict{Capacity: 12, CapacityStep: 3, CapacityBound: ladderresult.BoundLower, Knee: 8, KneeStep: 2}}
	invalid := verdict.Validity{Causes: []verdict.InvalidCause{
		{Cause: cause.HostStarved, Reason: "host starved", Action: "give the prober CPU"},
		{Cause: cause.DispatchLag, Reason: "lag p99 80ms", Action: "lower the rate"}}}
	in := Input{Version: "v1", Now: now, Targets: []TargetInput{
		{Name: "a", Ladder: &LadderProgress{Step: 3, Steps: 8, Rate: 12, StepStarted: now, StepDuration: time.Minute}, Verdict: verdict.Validity{Valid: true}, Memory: mem, Last: last},
		{Name: "b", Verdict: invalid, Failures: fails, Configured: Configured{Ladder: true}},
	}}
	for _, tc := range []struct {
		name      string
		fleet     fleet.Status
		wantState string // of target a
		wantCap   string // of target a
		wantBCap  string // of target b, which had no ladder
	}{
		{"alone", fleet.Status{Identity: fleet.Alone()}, "ladder step 3/8 at 12 req/s", "≥ 12 req/s (lower bound: no valid step above it failed)", "unknown: no ladder yet"},
		{"coordinator", fleet.Status{Identity: fleet.Identity{Shard: 0, Shards: 3}},
			"fleet coordinator (shard 0 of 3): ladder step 3/8 at 12 req/s (this shard's share of the fleet's step)", "fleet of 3: ≥ 12 req/s", "unknown: no ladder yet"},
		{"shard", fleet.Status{Identity: fleet.Identity{Shard: 2, Shards: 3}, Coordinator: "10.0.0.1:9464", CoordinatorState: "idle"},
			"fleet shard 2/3: ladder step 3/8 at 12 req/s (this shard's share of the fleet's step)", "the fleet's, on shard 0", "the fleet's, on shard 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in.Fleet = tc.fleet
			st := Build(in)
			// b (PROBER BLOCKED: its host is starved) is worse than a (LADDER RUNNING)
			if len(st.Targets) != 2 || st.Targets[0].Name != "b" || st.Targets[1].Name != "a" {
				t.Fatalf("targets %+v, want b then a", st.Targets)
			}
			b, a := st.Targets[0], st.Targets[1]
			if st.Summary != "2 targets: 1 PROBER BLOCKED, 1 LADDER RUNNING" {
				t.Errorf("summary %q", st.Summary)
			}
			if a.State != tc.wantState || !strings.HasPrefix(a.Capacity, tc.wantCap) {
				t.Errorf("a: state %q, capacity %q; want %q, %q…", a.State, a.Capacity, tc.wantState, tc.wantCap)
			}
			if (st.Fleet == "") == tc.fleet.Identity.InFleet() {
				t.Errorf("fleet line %q in fleet %v", st.Fleet, tc.fleet.Identity)
			}
			if !a.GeneratorValid || !a.Prober.Valid || a.Target.State != StateLadder || a.Latency[0].Count != 50 || a.LastLadder != last.Finished {
				t.Errorf("a: %+v", a)
			}
			if b.GeneratorValid || b.Generator != "INVALID: host starved; lag p99 80ms" || b.GeneratorAdvice != "give the prober CPU; lower the rate" ||
				b.Prober.Causes != "host, lag" || b.Prober.Evidence != "#prober-host" {
				t.Errorf("b's verdict: %q / %q / %+v", b.Generator, b.GeneratorAdvice, b.Prober)
			}
			if b.Target.State != StateBlocked || b.Capacity != tc.wantBCap || len(b.Failures) != MaxFailures || b.Failures[0].Reason != "status_500" {
				t.Errorf("b without memory or ladder: state %q, capacity %q, %d failures", b.Target.State, b.Capacity, len(b.Failures))
			}
		})
	}
}

// TestLaddersOffCard: a target without a ladder (ladder.enabled false)
// says its ladders are off wherever a capacity would be (card, history,
// last ladder, summary row), never "no ladder yet", which promises one; a
// target with a ladder that has not run yet says "no ladder yet".
func TestLaddersOffCard(t *testing.T) {
	now := time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		ladder    bool
		capacity  string
		row       string
		html, not []string
	}{
		{"off", false, "not measured: this target's ladders are off (ladder.enabled: false)", "ladders off",
			[]string{"ladders off</span>", "never: ladders off"}, []string{"no ladder yet"}},
		{"not yet", true, "unknown: no ladder yet", "-",
			[]string{"no ladder yet", "<dd>never</dd>"}, []string{"ladders off"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := Build(Input{Version: "v1", Now: now, Started: now.Add(-time.Hour), Targets: []TargetInput{
				{Name: "t", Verdict: verdict.Validity{Valid: true}, Configured: Configured{BaselineRate: 0.2, Ladder: tc.ladder}}}})
			ts := st.Targets[0]
			if ts.Capacity != tc.capacity || ts.Row.Capacity != tc.row || ts.LaddersOff == tc.ladder {
				t.Errorf("capacity %q, row %q, ladders off %v; want %q, %q", ts.Capacity, ts.Row.Capacity, ts.LaddersOff, tc.capacity, tc.row)
			}
			rec := httptest.NewRecorder()
			Handler(func() Status { return st }, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/targets/t", nil))
			body := rec.Body.String()
			summary := httptest.NewRecorder()
			Handler(func() Status { return st }, nil).ServeHTTP(summary, httptest.NewRequest(http.MethodGet, "/", nil))
			if want := map[bool]string{true: "No ladder has run yet.", false: "No target runs ladders"}[tc.ladder]; !strings.Contains(summary.Body.String(), want) {
				t.Errorf("summary page lacks %q", want)
			}
			for _, w := range tc.html {
				if !strings.Contains(body, w) {
					t.Errorf("card lacks %q", w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(body, w) {
					t.Errorf("card says %q", w)
				}
			}
		})
	}
}
