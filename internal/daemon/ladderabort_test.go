package daemon

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestLadderInStepTTFTRule: the daemon's ladder client tells the runner when
// each request's first token arrives. A target that stalls (no first token)
// stops the step inside it, while one that answers at once and then streams
// for longer than the TTFT limit does not.
func TestLadderInStepTTFTRule(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: daemon ladders against stalling and slow-streaming simulators, step by step in real time")
	}
	for _, tc := range []struct {
		name    string
		stall   bool
		aborted bool
	}{
		{"long streams after a quick first token", false, false},
		{"stalled target", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := sim.DefaultConfig()
			cfg.TTFT, cfg.TokenTime, cfg.OutputTokens = sim.FixedDist(0.01), sim.FixedDist(0.1), sim.FixedDist(12) // 1.1 s streams
			if tc.stall {
				cfg.Windows = []sim.Window{{Start: 0, Duration: time.Minute, Stall: true}}
			}
			srv, err := sim.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			base, stop, err := srv.Start("")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = stop() }()
			yaml := fmt.Sprintf(`
  - name: t1
    url: %s
    model: m
    timeouts: {connect: 1s, headers: 3s, first_content: 3s, idle: 3s, total: 5s}
    baseline: {enabled: false}
    classes:
      - name: chat
        output: {dist: fixed, value: 12}
        gates: {ttft: 100ms}
    ladder:
      enabled: true
      run_on_start: true
      steps: [20]
      step_duration: 4s
      max_rate: 50
      max_lag_p99: 1s
      abort: {ttft_gate_multiple: 5, error_fraction: 0, rejection_fraction: 0}
`, base)
			r := startDaemon(t, loadConfig(t, configYAML("1s", yaml)), nil)
			var res ladder.Result
			waitFor(t, 20*time.Second, "the ladder to finish", func() bool {
				r.d.mu.Lock()
				defer r.d.mu.Unlock()
				var ok bool
				res, ok = r.d.last["t1"]
				return ok
			})
			if err := r.stop(t); err != nil {
				t.Fatal(err)
			}
			if len(res.Steps) != 1 {
				t.Fatalf("steps %+v", res.Steps)
			}
			row := res.Steps[0]
			t.Logf("planned %d (+%d pending), ok %d, TTFT p95 %.3fs, abort %q", row.Summary.Planned, row.Summary.Pending, row.Summary.Completed, row.Summary.TTFT.P95.Seconds(), row.AbortReason)
			// The simulator shares the prober's host: a step whose prober
			// was measured starved (starvedStep) had first tokens late for
			// the host, not the target, so the timing below is then logged
			// with that cause. What is not timing holds on any host.
			starved := starvedStep(res)
			if !tc.aborted {
				if res.Aborted || row.Summary.Completed == 0 {
					if starved != "" {
						t.Logf("aborted %v %q with %d ok: host cause (%s), not judged", res.Aborted, res.AbortReason, row.Summary.Completed, starved)
						return
					}
					t.Fatalf("aborted %v %q with %d ok: streams longer than the TTFT limit after a quick first token tripped the rule", res.Aborted, res.AbortReason, row.Summary.Completed)
				}
				return
			}
			if !res.Aborted || !strings.HasPrefix(row.AbortReason, "mid-step: TTFT p95 above") || !strings.Contains(row.AbortReason, "still waiting") {
				t.Fatalf("aborted %v, reason %q: want the in-step TTFT rule on requests still waiting", res.Aborted, row.AbortReason)
			}
			if full := 20 * 4; row.Summary.Planned+row.Summary.Pending >= full*3/4 {
				if starved != "" {
					t.Logf("%d of %d arrivals planned before the abort: host cause (%s), not judged", row.Summary.Planned+row.Summary.Pending, full, starved)
					return
				}
				t.Fatalf("%d of %d arrivals planned before the abort", row.Summary.Planned+row.Summary.Pending, full)
			}
		})
	}
}

// starvedStep names the first step of l whose prober was measured starved
// of CPU, "" when none was: its generator invalid for a host cause, or its
// own threads (the simulator's too: one process) waiting runnable for a
// CPU at the validity verdict's host_starved threshold. Stricter than
// busyStep: a host busy with others' work, or under host-wide CPU
// pressure (0.6-0.9 on this shared machine with the prober valid), is
// not enough.
func starvedStep(l ladder.Result) string {
	lim := verdict.DefaultValidity
	for _, s := range l.Steps {
		v := s.Summary.Validity
		h := v.Host
		if v.HostCaused() || (h.RunWaitKnown && h.RunWait >= lim.StarvedRunWait) {
			return fmt.Sprintf("step %d: %v, causes %v", s.Index, h, v.CauseNames())
		}
	}
	return ""
}
