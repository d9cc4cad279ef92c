package wiring

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/fleet"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestNewPlanAssembles: one call gives each piece the target configures,
// and nothing it does not.
func TestNewPlanAssembles(t *testing.T) {
	ladderKeys := "    ladder: {enabled: true, steps: [1, 2], schedule: {every: 24h}}\n"
	for _, tc := range []struct {
		name                            string
		extra                           string
		opts                            PlanOptions
		ladder, limited, metrics, retry bool
		classes                         int
	}{
		{name: "minimal", classes: 1},
		{name: "ladder enabled", extra: ladderKeys, ladder: true, classes: 1},
		{name: "ladder asked for", opts: PlanOptions{Ladder: true, Limits: config.Limits{MaxRate: 50}}, ladder: true, classes: 1},
		{name: "budget", extra: "    budget: {requests_per_day: 1000}\n", limited: true, classes: 1},
		{name: "server metrics", extra: ladderKeys + "    server_metrics: {url: http://127.0.0.1:9/metrics}\n", ladder: true, metrics: true, classes: 1},
		{name: "retries and classes", extra: "    retries: {max_attempts: 3}\n    classes: [{name: a}, {name: b}]\n", retry: true, classes: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPlan(loadTarget(t, tc.extra), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if p.HasLadder != tc.ladder || p.Limited != tc.limited || (p.ServerMetrics != nil) != tc.metrics ||
				(p.Retry.MaxAttempts > 1) != tc.retry || len(p.Classes) != tc.classes {
				t.Errorf("ladder %v limited %v metrics %v retry %+v classes %d", p.HasLadder, p.Limited, p.ServerMetrics != nil, p.Retry, len(p.Classes))
			}
			if p.HasLadder && (!p.Ladder.ExecMarksFirstToken || p.Ladder.ServerMetrics != p.ServerMetrics || p.Ladder.StepDuration <= 0) {
				t.Errorf("ladder config %+v", p.Ladder)
			}
			if p.Client == nil || p.Endpoint.Adapter == nil || p.Client.Redactor() == nil {
				t.Error("no client")
			}
		})
	}
}

// TestNewPlanForShard: in a fleet the plan is this shard's share (its
// baseline rate and each ladder step), with the fleet's rates kept.
func TestNewPlanForShard(t *testing.T) {
	tg := loadTarget(t, "    baseline: {rate: 3}\n    ladder: {enabled: true, steps: [3, 6], schedule: {every: 24h}}\n")
	for _, tc := range []struct {
		id             fleet.Identity
		rate           float64
		steps, fleetAt []float64
	}{
		{fleet.Identity{}, 3, []float64{3, 6}, []float64{3, 6}},
		{fleet.Alone(), 3, []float64{3, 6}, []float64{3, 6}},
		{fleet.Identity{Shard: 1, Shards: 3}, 1, []float64{1, 2}, []float64{3, 6}},
	} {
		p, err := NewPlan(tg, PlanOptions{Shard: tc.id, Limits: config.Limits{MaxRate: 100}})
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
		if p.Target.Baseline.Rate != tc.rate || !slices.Equal(p.Ladder.Steps, tc.steps) || !slices.Equal(p.FleetSteps, tc.fleetAt) {
			t.Errorf("%v: baseline %g, steps %v, fleet steps %v", tc.id, p.Target.Baseline.Rate, p.Ladder.Steps, p.FleetSteps)
		}
	}
}

// TestNewPlanRefuses: a piece the configuration's checks cannot see (a
// target built in code) fails the plan, named.
func TestNewPlanRefuses(t *testing.T) {
	tg := loadTarget(t, "    cancellation: {fraction: 0.5, delay: 1s}\n")
	tg.Cancellation.Fraction = 2 // past validation
	if _, err := NewPlan(tg, PlanOptions{}); err == nil || !strings.Contains(err.Error(), "cancellation") {
		t.Errorf("bad injection: %v", err)
	}
	tg = loadTarget(t, "")
	tg.Retries.Jitter = 2
	if _, err := NewPlan(tg, PlanOptions{}); err == nil || !strings.Contains(err.Error(), "retries") {
		t.Errorf("bad retry: %v", err)
	}
}

// TestLadderExecRoutesByClass: the one ladder executor sends a request
// with its class's prompts (here its max_tokens), an unknown class with
// the first class's, through the plan's wrapper.
func TestLadderExecRoutesByClass(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]int{} // max_tokens → requests
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			MaxTokens int `json:"max_tokens"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		seen[body.MaxTokens]++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	tg := loadTarget(t, "    classes: [{name: a, output: {dist: fixed, value: 5}}, {name: b, output: {dist: fixed, value: 7}}]\n")
	tg.URL = srv.URL + "/v1"
	var wrapped atomic.Int64
	p, err := NewPlan(tg, PlanOptions{Wrap: func(e dispatch.Exec) dispatch.Exec {
		return func(ctx context.Context, rec *ledger.Record, d func()) ledger.Result {
			wrapped.Add(1)
			return e(ctx, rec, d)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, class := range []string{"b", "b", "a", "unknown"} {
		led := ledger.New(time.Now())
		g := dispatch.NewGroup(led)
		seq, err := schedule.New(schedule.Spec{Kind: schedule.Constant, Seed: 1}, schedule.Step{Rate: 100})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Open(context.Background(), dispatch.OpenConfig{Arrivals: seq, Start: led.Now(), Window: 15 * time.Millisecond, // one arrival, at 10 ms
			Meta: func(time.Duration) ledger.Meta {
				return ledger.Meta{Traffic: ledger.TrafficLadder, Target: "t1", Class: class, API: tg.API}
			}, Exec: p.LadderExec(led.Now)}); err != nil {
			t.Fatal(err)
		}
		g.Drain(context.Background(), 10*time.Second)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[7] != 2 || seen[5] != 2 || len(seen) != 2 {
		t.Errorf("requests by max_tokens: %v, want 7 twice (class b) and 5 twice (a, and the unknown class)", seen)
	}
	if wrapped.Load() != 4 {
		t.Errorf("wrapper saw %d requests, want 4", wrapped.Load())
	}
}

// TestPlanProbeStreams: a probe's records reach the summary and the
// ledger file as they finish; the summary counts every record the file
// holds.
func TestPlanProbeStreams(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.TTFT, cfg.TokenTime, cfg.OutputTokens = sim.FixedDist(0.001), sim.FixedDist(0.001), sim.FixedDist(4)
	base := testutil.StartSim(t, cfg)
	tg := loadTarget(t, "    baseline: {arrival: constant, rate: 20}\n")
	tg.URL = base
	p, err := NewPlan(tg, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	path := filepath.Join(t.TempDir(), "l.jsonl")
	var draining atomic.Bool
	res, err := p.Probe(context.Background(), ProbeRun{Window: time.Second, Drain: 20 * time.Second, LedgerPath: path, Version: "test",
		Draining: func(int) { draining.Store(true) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.LedgerErr != nil || res.LostErr != nil {
		t.Fatalf("ledger: %v / %v", res.LedgerErr, res.LostErr)
	}
	s := res.Summary
	if s.Planned != 20 || s.Attempts != 20 || s.Completed+s.Censored+s.Rejected+s.Cancelled+s.Unsent > s.Attempts || !draining.Load() {
		t.Errorf("planned %d attempts %d completed %d; told draining %v", s.Planned, s.Attempts, s.Completed, draining.Load())
	}
	if s.Completed == 0 || s.TTFT.Count == 0 {
		t.Errorf("no completed request measured: %+v", s.Outcomes)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		lines++
	}
	if lines != 1+s.Attempts { // the run header, then one line a record
		t.Errorf("ledger file: %d lines, want 1 + %d records", lines, s.Attempts)
	}
	// An unwritable ledger path is the probe's error, typed.
	p.Target.Baseline.Rate = 1
	_, err = p.Probe(context.Background(), ProbeRun{Window: time.Millisecond, LedgerPath: filepath.Join(t.TempDir(), "no", "l.jsonl")})
	var lf *LedgerFileError
	if !errors.As(err, &lf) {
		t.Errorf("unwritable ledger: %v", err)
	}
}
