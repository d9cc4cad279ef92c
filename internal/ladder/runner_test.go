package ladder

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// testExec is a minimal openai-chat streaming client for these tests only
// (the product's client lives in internal/protocol; the ladder never talks
// HTTP itself).
func testExec(led *ledger.Ledger, base string, client *http.Client) dispatch.Exec {
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true}}`
	return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions", strings.NewReader(body))
		dispatched()
		if err != nil {
			return ledger.Result{Outcome: ledger.HTTPError, Reason: ledger.ReasonClientError, Err: "build"}
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return ledger.Result{Outcome: ledger.Cancelled, Reason: ledger.ReasonInterrupted}
			}
			return ledger.Result{Outcome: ledger.TransportError, Reason: ledger.ReasonTransportOther, Err: "transport"}
		}
		defer resp.Body.Close()
		rec.Headers, rec.Status = led.Now(), resp.StatusCode
		if resp.StatusCode != http.StatusOK {
			_, _ = io.Copy(io.Discard, resp.Body)
			switch resp.StatusCode {
			case http.StatusTooManyRequests:
				return ledger.Result{Outcome: ledger.Rejected, Reason: ledger.ReasonStatus429}
			case http.StatusServiceUnavailable:
				return ledger.Result{Outcome: ledger.Rejected, Reason: ledger.ReasonStatus503}
			}
			return ledger.Result{Outcome: ledger.HTTPError, Reason: ledger.ReasonServerError}
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			if data == "[DONE]" {
				return ledger.Result{Outcome: ledger.OK, Reason: ledger.ReasonStop}
			}
			var chunk struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
				Usage *struct {
					Prompt     int `json:"prompt_tokens"`
					Completion int `json:"completion_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal([]byte(data), &chunk); err != nil {
				return ledger.Result{Outcome: ledger.StreamError, Reason: ledger.ReasonMalformed}
			}
			if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
				now := led.Now()
				if rec.FirstContent == 0 {
					rec.FirstContent = now
				}
				rec.LastContent = now
				rec.ContentEvents++
			}
			if chunk.Usage != nil {
				rec.Usage = ledger.Usage{Known: true, Prompt: chunk.Usage.Prompt, Completion: chunk.Usage.Completion}
			}
		}
		return ledger.Result{Outcome: ledger.StreamError, Reason: ledger.ReasonTruncated, Err: "truncated"}
	}
}

// fixture is a simulator with a known capacity plus a ledger and group.
type fixture struct {
	srv    *sim.Server
	base   string
	stop   func() error
	client *http.Client
	led    *ledger.Ledger
	group  *dispatch.Group
	steps  map[int]int // records seen per step
	mu     sync.Mutex
}

func newFixture(t *testing.T, slots, admission int) (*fixture, float64) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Slots, cfg.AdmissionLimit = slots, admission
	cfg.TTFT = sim.FixedDist(0.050)
	cfg.TokenTime = sim.FixedDist(0.010)
	cfg.OutputTokens = sim.FixedDist(16)
	srv, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base, stop, err := srv.Start("")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		srv: srv, base: base, stop: stop, steps: map[int]int{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}},
	}
	return f, cfg.Capacity()
}

func (f *fixture) close(t *testing.T) {
	t.Helper()
	f.group.Drain(context.Background(), time.Second)
	if err := f.led.Verify(); err != nil {
		t.Errorf("ledger invariants: %v", err)
	}
	f.client.CloseIdleConnections()
	if err := f.stop(); err != nil {
		t.Errorf("sim stop: %v", err)
	}
}

func baseConfig(target string) Config {
	return Config{
		Target: target, API: "openai-chat",
		Classes:            []Class{{Name: "short", Weight: 1, Gates: stats.Gates{TTFT: 300 * time.Millisecond}}},
		StepDuration:       2 * time.Second,
		MaxRate:            100,
		Arrival:            "constant",
		Seed:               7,
		GoodFractionTarget: 0.9,
		KneeFactor:         2,
		Settle:             10 * time.Second,
		ProgressEvery:      200 * time.Millisecond,
		MidStepMin:         -1,
		Validity:           verdict.ValidityConfig{MaxLagP99: 250 * time.Millisecond},
	}
}

// build makes a runner whose group is created after it (the ledger's sink
// must reach the runner), mirroring how the daemon wires them.
func build(t *testing.T, f *fixture, cfg Config) *Runner {
	t.Helper()
	var rr *Runner
	f.led = ledger.New(time.Now(), ledger.SinkFunc(func(rec *ledger.Record) {
		f.mu.Lock()
		f.steps[rec.Step]++
		f.mu.Unlock()
		rr.Record(rec)
	}))
	f.group = dispatch.NewGroup(f.led)
	r, err := New(cfg, f.group, testExec(f.led, f.base, f.client))
	if err != nil {
		t.Fatal(err)
	}
	rr = r
	return r
}

func TestLadderFindsSimulatorCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a whole ladder against a simulator of known capacity (ground truth), in real time")
	}
	defer goleak.VerifyNone(t)
	f, truth := newFixture(t, 4, 1000) // 4 slots × 0.2 s service = 20 req/s; queue beyond
	if truth < 19.9 || truth > 20.1 {
		t.Fatalf("fixture capacity %g, want 20", truth)
	}
	cfg := baseConfig("sim")
	cfg.Steps = []float64{5, 10, 15, 30}
	cfg.StopAt = StopAtTop // 30 req/s is offered even if noise fails 15
	cfg.KneeFactor = 5     // the base TTFT is ~50 ms: a factor of 2 is within CPU noise on a shared machine
	cfg.HistoryFile = filepath.Join(t.TempDir(), "history.jsonl")
	var phases []string
	var pmu sync.Mutex
	cfg.Progress = func(p Progress) {
		pmu.Lock()
		phases = append(phases, p.Phase)
		pmu.Unlock()
	}
	r := build(t, f, cfg)
	res, err := r.Run(context.Background(), "manual")
	f.close(t)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rows(t, res) {
		t.Logf("step %d rate %g planned %d ok %d good %.2f ttft p95 %.3fs valid %v %v pending %d",
			s.Step, s.Rate, s.Planned, s.OK, s.GoodFraction, s.TTFT.P95, s.Valid, s.Invalid, s.Pending)
	}
	if len(res.Steps) != 4 || res.Aborted {
		t.Fatalf("want 4 steps, not aborted; got %d, aborted %v (%s)", len(res.Steps), res.Aborted, res.AbortReason)
	}
	// The truth (20 req/s) lies between the 15 and 30 steps: the right
	// answer is 15; one step of tolerance allows 10; 30 is far overloaded.
	if res.Capacity != 15 && res.Capacity != 10 {
		t.Errorf("capacity %g req/s, want 15 (within one step of the true %g)", res.Capacity, truth)
	}
	if res.Capacity > truth {
		t.Errorf("capacity %g above the truth %g", res.Capacity, truth)
	}
	if res.Knee != 30 || res.KneeStep != 4 {
		t.Errorf("knee %g (step %d): want the overloaded step (30 req/s, step 4)", res.Knee, res.KneeStep)
	}
	hist, skipped, err := ReadHistory(cfg.HistoryFile, 0)
	if err != nil || skipped != 0 || len(hist) != 1 {
		t.Fatalf("history: %d results, %d skipped, %v", len(hist), skipped, err)
	}
	if hist[0].Capacity != res.Capacity || len(hist[0].Steps) != 4 || hist[0].Trigger != "manual" {
		t.Errorf("history line differs from the result: %+v", hist[0])
	}
	pmu.Lock()
	defer pmu.Unlock()
	if n := strings.Count(strings.Join(phases, ","), "done"); n != 4 {
		t.Errorf("progress reported %d done phases, want 4: %v", n, phases)
	}
}

func TestLadderAbortsOnRejections(t *testing.T) {
	defer goleak.VerifyNone(t)
	f, _ := newFixture(t, 4, 4) // no queue: overload is rejected with 429
	cfg := baseConfig("sim")
	cfg.Steps = []float64{5, 40, 50}
	cfg.Abort = AbortRules{RejectionFraction: 0.2}
	cfg.MidStepMin = 20
	r := build(t, f, cfg)
	start := time.Now()
	res, err := r.Run(context.Background(), "schedule")
	f.close(t)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Aborted || !strings.Contains(res.AbortReason, "rejection fraction") || !strings.HasPrefix(res.AbortReason, "step 2:") {
		t.Fatalf("want an abort at step 2 on rejections, got aborted=%v %q", res.Aborted, res.AbortReason)
	}
	if len(res.Steps) != 2 {
		t.Fatalf("ran %d steps, want 2", len(res.Steps))
	}
	f.mu.Lock()
	n3 := f.steps[3]
	f.mu.Unlock()
	if n3 != 0 {
		t.Fatalf("step 3 planned %d arrivals after the abort", n3)
	}
	// Aborted mid-step: well before the two full steps would have ended.
	if d := time.Since(start); d > 3*cfg.StepDuration+cfg.Settle {
		t.Logf("took %s", d) // informative only: machines are noisy
	}
	if !strings.Contains(res.Steps[1].AbortReason, "rejection") {
		t.Errorf("step row lacks the reason: %+v", res.Steps[1])
	}
}

func TestRunInterrupted(t *testing.T) {
	defer goleak.VerifyNone(t)
	f, _ := newFixture(t, 4, 1000)
	cfg := baseConfig("sim")
	cfg.Steps = []float64{5, 10}
	cfg.StepDuration = 5 * time.Second
	r := build(t, f, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	res, err := r.Run(ctx, "manual")
	f.close(t)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the context error, got %v", err)
	}
	if !res.Aborted || len(res.Steps) != 1 || res.Steps[0].AbortReason != "interrupted" {
		t.Fatalf("want one interrupted step, got %+v", res)
	}
}

func TestNewRefuses(t *testing.T) {
	led := ledger.New(time.Now())
	g := dispatch.NewGroup(led)
	exec := func(context.Context, *ledger.Record, func()) ledger.Result { return ledger.Result{} }
	cases := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"above hard max", func(c *Config) { c.Steps = []float64{1, 200} }, "above the hard maximum"},
		{"no max", func(c *Config) { c.MaxRate = 0 }, "hard maximum rate"},
		{"no steps", func(c *Config) { c.Steps = nil }, "no steps"},
		{"zero rate", func(c *Config) { c.Steps = []float64{0} }, "must be above 0"},
		{"bad knee", func(c *Config) { c.KneeFactor = 1 }, "knee factor"},
		{"bad arrival", func(c *Config) { c.Arrival = "bursty" }, "unknown arrival"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig("x")
			cfg.Steps = []float64{1, 2}
			tc.mod(&cfg)
			_, err := New(cfg, g, exec)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
		})
	}
	r, err := New(func() Config { c := baseConfig("x"); c.Steps = []float64{1}; return c }(), g, exec)
	if err != nil {
		t.Fatal(err)
	}
	r.running.Lock()
	if _, err := r.Run(context.Background(), "manual"); !errors.Is(err, ErrRunning) {
		t.Fatalf("concurrent run: %v", err)
	}
	r.running.Unlock()
}

// fakeExec answers every request after the delay of its class (default
// delay for the others): first content at half the delay, the end at the
// delay. No network.
func fakeExec(led *ledger.Ledger, delay time.Duration, byClass map[string]time.Duration) dispatch.Exec {
	return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		dispatched()
		d := delay
		if c, ok := byClass[rec.Class]; ok {
			d = c
		}
		t := time.NewTimer(d / 2)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ledger.Result{Outcome: ledger.Cancelled, Reason: ledger.ReasonInterrupted}
		}
		rec.Headers = led.Now()
		rec.FirstContent, rec.LastContent, rec.ContentEvents = rec.Headers, rec.Headers, 1
		t.Reset(d / 2)
		select {
		case <-t.C:
		case <-ctx.Done():
			return ledger.Result{Outcome: ledger.Cancelled, Reason: ledger.ReasonInterrupted}
		}
		return ledger.Result{Outcome: ledger.OK, Reason: ledger.ReasonStop}
	}
}

func buildFake(t *testing.T, cfg Config, exec func(*ledger.Ledger) dispatch.Exec) (*Runner, *dispatch.Group) {
	t.Helper()
	var rr *Runner
	led := ledger.New(time.Now(), ledger.SinkFunc(func(rec *ledger.Record) { rr.Record(rec) }))
	g := dispatch.NewGroup(led)
	r, err := New(cfg, g, exec(led))
	if err != nil {
		t.Fatal(err)
	}
	rr = r
	return r, g
}

// TestLadderConstantStepsPlanExactly: a constant ladder step at rate r for W
// plans exactly r·W arrivals (the steps that used to plan one too few).
func TestLadderConstantStepsPlanExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a whole constant-rate ladder in real time to count each step's arrivals")
	}
	defer goleak.VerifyNone(t)
	cfg := baseConfig("exact")
	cfg.Steps = []float64{2, 5, 100, 200}
	cfg.StepDuration = time.Second
	cfg.MaxRate = 1000
	r, g := buildFake(t, cfg, func(led *ledger.Ledger) dispatch.Exec { return fakeExec(led, 2*time.Millisecond, nil) })
	res, err := r.Run(context.Background(), "manual")
	g.Drain(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{2, 5, 100, 200} {
		if i >= len(res.Steps) {
			t.Fatalf("only %d steps ran: %s", len(res.Steps), res.AbortReason)
		}
		if got := rows(t, res)[i].Planned + rows(t, res)[i].Pending; got != want {
			t.Errorf("step %d (%g req/s × 1s): planned %d, want %d", i+1, cfg.Steps[i], got, want)
		}
	}
}

// TestLadderPerClassJudgement: each class is judged on its own records and
// gates. "long" answers in 300 ms against a 200 ms TTFT gate and never
// meets it; "chat" answers in 20 ms and always does: their capacities
// differ, in each class's own offered rate.
func TestLadderPerClassJudgement(t *testing.T) {
	defer goleak.VerifyNone(t)
	cfg := baseConfig("classes")
	cfg.Classes = []Class{
		{Name: "chat", Weight: 3, Gates: stats.Gates{TTFT: 100 * time.Millisecond}},
		{Name: "long", Weight: 1, Gates: stats.Gates{TTFT: 200 * time.Millisecond}},
	}
	cfg.Steps = []float64{8, 16}
	cfg.StepDuration = time.Second
	r, g := buildFake(t, cfg, func(led *ledger.Ledger) dispatch.Exec {
		return fakeExec(led, 20*time.Millisecond, map[string]time.Duration{"long": 600 * time.Millisecond})
	})
	res, err := r.Run(context.Background(), "manual")
	g.Drain(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 {
		t.Fatalf("%d steps: %s", len(res.Steps), res.AbortReason)
	}
	for _, s := range rows(t, res) {
		t.Logf("step %d valid %v %v classes %+v", s.Step, s.Valid, s.Invalid, s.Classes)
		if !s.Valid {
			if !verdict.HostCaused(s.InvalidCauses) {
				t.Fatalf("step %d invalid, not for the prober host: %v", s.Step, s.Invalid)
			}
			t.Skipf("step %d invalid for the prober host (a busy machine: %v): per-class capacity needs valid steps", s.Step, s.Invalid)
		}
	}
	if len(res.Classes) != 2 {
		t.Fatalf("per-class results %+v", res.Classes)
	}
	chat, long := res.Classes[0], res.Classes[1]
	if chat.Class != "chat" || chat.Capacity != 12 || chat.CapacityStep != 2 || chat.CapacityBound != ladderresult.BoundLower {
		t.Errorf("chat %+v: want 12 req/s of chat (16 × 3/4) at the top step, a lower bound", chat)
	}
	if long.Class != "long" || long.CapacityStep != 0 || long.CapacityBound != "" {
		t.Errorf("long %+v: never met its gate, want no capacity", long)
	}
	if res.CapacityStep != 0 {
		t.Errorf("every class together: capacity %g at step %d, want none (a quarter of the requests are never good)", res.Capacity, res.CapacityStep)
	}
	for _, s := range rows(t, res) {
		if len(s.Classes) != 2 || s.Classes[0].Good == 0 || s.Classes[1].Good != 0 || s.Classes[0].Rate == s.Classes[1].Rate {
			t.Errorf("step %d class rows %+v", s.Step, s.Classes)
		}
	}
}

// TestLadderInvalidStep: an invalid step (here the in-flight cap suppressed
// arrivals) is recorded with its cause and never used. With
// OnGeneratorInvalid the ladder aborts there; without it the ladder goes on.
func TestLadderInvalidStep(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: two whole ladders in real time, with and without the abort on an invalid step")
	}
	defer goleak.VerifyNone(t)
	for _, abort := range []bool{true, false} {
		cfg := baseConfig("invalid")
		cfg.Steps = []float64{2, 40, 3}
		cfg.StepDuration = time.Second
		cfg.MaxInFlight = 2
		cfg.Abort = AbortRules{OnGeneratorInvalid: abort}
		r, g := buildFake(t, cfg, func(led *ledger.Ledger) dispatch.Exec { return fakeExec(led, 150*time.Millisecond, nil) })
		res, err := r.Run(context.Background(), "manual")
		g.Drain(context.Background(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Steps) < 2 || rows(t, res)[1].Valid || len(rows(t, res)[1].InvalidCauses) == 0 || rows(t, res)[1].InvalidCauses[0].Cause != cause.InFlightCap {
			t.Fatalf("abort %v: step 2 should be invalid (in_flight_cap): %+v", abort, res.Steps)
		}
		if !rows(t, res)[0].Valid {
			if !verdict.HostCaused(rows(t, res)[0].InvalidCauses) {
				t.Fatalf("step 1 invalid, not for the prober host: %v", rows(t, res)[0].Invalid)
			}
			t.Skipf("step 1 invalid for the prober host (a busy machine): %v", rows(t, res)[0].Invalid)
		}
		if abort {
			if !res.Aborted || len(res.Steps) != 2 || !strings.Contains(res.AbortReason, "in-flight cap full") {
				t.Errorf("abort: aborted %v after %d steps (%q), want an abort at step 2 naming the cap", res.Aborted, len(res.Steps), res.AbortReason)
			}
			if res.Capacity != 2 || res.CapacityStep != 1 || res.CapacityBound != ladderresult.BoundLower {
				t.Errorf("abort: capacity %g step %d %q, want 2 at step 1, a lower bound", res.Capacity, res.CapacityStep, res.CapacityBound)
			}
			continue
		}
		if res.Aborted || len(res.Steps) != 3 {
			t.Fatalf("continue: aborted %v after %d steps (%q), want all 3 steps", res.Aborted, len(res.Steps), res.AbortReason)
		}
		if res.Capacity != 3 || res.CapacityStep != 3 || res.CapacityBound != ladderresult.BoundLower || rows(t, res)[1].Met {
			t.Errorf("continue: capacity %g step %d %q (step 2 met %v): the invalid step 2 must never count", res.Capacity, res.CapacityStep, res.CapacityBound, rows(t, res)[1].Met)
		}
	}
}

// TestStepHostWindowFromStart: a step set up ahead of its start (a fleet
// step is) reads the prober host's health from its start, not over the
// idle wait before it, which would dilute the CPU figure that tells a
// starved prober from a slow target.
func TestStepHostWindowFromStart(t *testing.T) {
	defer goleak.VerifyNone(t)
	cfg := baseConfig("host")
	cfg.Steps, cfg.StepDuration = []float64{20}, time.Second
	var led *ledger.Ledger
	r, g := buildFake(t, cfg, func(l *ledger.Ledger) dispatch.Exec { led = l; return fakeExec(l, 2*time.Millisecond, nil) })
	defer g.Drain(context.Background(), time.Second)
	sess, err := r.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.End()
	const lead = 1500 * time.Millisecond
	res, err := sess.Step(context.Background(), 1, led.Now()+lead)
	if err != nil {
		t.Fatal(err)
	}
	h := res.Step.Summary.Validity.Host
	t.Logf("host health read over %v for a %v step set up %v ahead", h.Window, cfg.StepDuration, lead)
	// From the start to the last arrival (975 ms at 20 req/s, constant).
	if !h.Known || h.Window < cfg.StepDuration/2 || h.Window >= cfg.StepDuration+lead/2 {
		t.Errorf("host window %v (known %v): want the step's %v from its start, not the %v wait before it", h.Window, h.Known, cfg.StepDuration, lead)
	}
}
