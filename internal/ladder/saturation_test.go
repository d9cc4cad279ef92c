package ladder

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// satFixture is a simulator whose service capacity is known from its
// configuration: every distribution fixed, so each request holds a slot
// for prefill + (tokens − 1) × per-token time (the first chunk comes with
// the prefill).
func satFixture(t *testing.T) (*fixture, float64) {
	t.Helper()
	const slots, prefill, perToken, tokens = 3, 0.050, 0.010, 16
	cfg := sim.DefaultConfig()
	cfg.Slots, cfg.AdmissionLimit = slots, 1000
	cfg.TTFT = sim.FixedDist(prefill)
	cfg.TokenTime = sim.FixedDist(perToken)
	cfg.OutputTokens = sim.FixedDist(tokens)
	service := prefill + (tokens-1)*perToken
	truth := slots / service
	if c := cfg.Capacity(); c < truth*0.999 || c > truth*1.001 {
		t.Fatalf("sim.Config.Capacity %g, derived %g", c, truth)
	}
	t.Logf("true capacity: %d slots / (prefill %gs + %d × %gs per token = %gs of service) = %.2f req/s",
		slots, prefill, tokens-1, perToken, service, truth)
	srv, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base, stop, err := srv.Start("")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, base: base, stop: stop, steps: map[int]int{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}, truth
}

// TestCapacityAgainstGroundTruth: against a simulator of known capacity C,
// ladders of 0.72, 0.85, 1, 1.25 and 1.5 × C with steps of 10 s, 20 s and
// 60 s (the full tier only) report a capacity within [0.7, 1.05] × C whatever
// the step length. The TTFT gate (5 s) is loose on purpose: over a 10 s
// step the backlog of a 1.25 × C step does not push its first tokens past
// it, so before the saturation rule such a step was the capacity (1.25 or
// 1.5 × C here, 1.22 × in the issue) and the figure depended on the step
// length. A step whose generator was invalid for a host cause (a busy
// machine) skips the capacity assertion for that length, and says so.
func TestCapacityAgainstGroundTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: ladders of 10 s, 20 s and 60 s steps against a simulator of known capacity (the ground truth, minutes of real load)")
	}
	lengths := []time.Duration{10 * time.Second, 20 * time.Second, 60 * time.Second}
	caps := map[time.Duration]float64{}
	for _, d := range lengths {
		t.Run(d.String(), func(t *testing.T) {
			f, truth := satFixture(t)
			cfg := baseConfig("sim")
			cfg.Classes = []Class{{Name: "chat", Weight: 1, Gates: stats.Gates{TTFT: 5 * time.Second}}}
			// 0.72 and 0.85 × C: a false alarm at 0.85 (a Poisson burst) still
			// leaves a capacity in the band
			cfg.Steps = []float64{0.72 * truth, 0.85 * truth, truth, 1.25 * truth, 1.5 * truth}
			cfg.StepDuration, cfg.Arrival, cfg.Gap, cfg.Settle = d, "poisson", time.Second, 60*time.Second
			cfg.StopAt = StopAtCapacity
			cfg.ServerMetrics = scraper(t, strings.TrimSuffix(f.base, "/v1")+"/metrics", time.Second)
			r := build(t, f, cfg)
			res, err := r.Run(context.Background(), "manual")
			f.close(t)
			if err != nil {
				t.Fatal(err)
			}
			hostCaused := false
			for _, s := range rows(t, res) {
				sat := "steady"
				if s.Steady == nil || !s.Steady.Judged {
					sat = "not judged"
				} else if s.Saturated {
					sat = s.Saturation
				}
				t.Logf("step %d: %.2f req/s (%.2f × C): good %.3f, TTFT p95 %.2fs, valid %v %v, %s",
					s.Step, s.Rate, s.Rate/truth, s.GoodFraction, s.TTFT.P95, s.Valid, s.CauseNames(), sat)
				for _, c := range s.InvalidCauses {
					hostCaused = hostCaused || c.Cause.IsHost()
				}
			}
			t.Logf("%s steps: capacity %.2f req/s = %.2f × C (%s), stopped: %s", d, res.Capacity, res.Capacity/truth, res.CapacityBound, res.Stopped)
			if hostCaused {
				t.Logf("a step was invalid for a host cause (a busy machine): capacity assertion skipped for %s", d)
				return
			}
			if lo, hi := 0.7*truth, 1.05*truth; res.Capacity < lo || res.Capacity > hi {
				t.Errorf("capacity %.2f req/s outside [%.2f, %.2f] (0.7–1.05 × C %.2f)", res.Capacity, lo, hi, truth)
			}
			caps[d] = res.Capacity
		})
	}
	var all []string
	for _, d := range lengths {
		if c, ok := caps[d]; ok {
			all = append(all, fmt.Sprintf("%s: %.2f", d, c))
		}
	}
	t.Logf("capacity by step length: %s", strings.Join(all, ", "))
}
