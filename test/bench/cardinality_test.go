package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// shape is what a target's series count depends on (docs/metrics.md#cardinality).
type shape struct {
	classes      int   // workload classes, each with a TTFT gate
	sessionTurns []int // turns of each class that is a session (among classes)
	ladder       bool  // ladder.enabled
	classic      bool  // telemetry.classic_histograms (and Prometheus keeping classic series)
	budgets      int   // limited daily budgets (tokens, requests): 0–2
}

// The terms of the cardinality formula, each named in docs/metrics.md.
const (
	countersPerKey = 7   // planned, dispatched, good, tokens ×2, cached prompt, cache reported
	outcomesPerKey = 9   // llmprobe_requests_total: one series per outcome (ledger.Outcomes)
	histsPerKey    = 5   // TTFT, inter-chunk, TPOT, duration, dispatch lag
	classicPerKey  = 100 // their classic series: (18+16+16+19+16) finite buckets + 5 × (+Inf, _sum, _count)
	classicTurn    = 21  // the per-turn TTFT's: 18 finite buckets + 3
	perClass       = 2   // llmprobe_arrival_rate (baseline), llmprobe_slo_ttft_seconds
	perTarget      = 12  // in flight, oldest, generator valid, lag max, 5 invalid causes, target info, identity changes, buffered streams
	perConnPath    = 8   // phases connect, write, processing, first_byte, first_content (plain HTTP to an IP); connections new, reused; connection info
)

// steadySeries is the formula: the series of one target once every
// class has had an ok request (finish reason stop) and every session all
// its turns ok, before any ladder ran.
func steadySeries(s shape) int {
	key := countersPerKey + outcomesPerKey + histsPerKey
	if s.classic {
		key += classicPerKey
	}
	keys := 1 // baseline, during="none"
	if s.ladder {
		keys = 3 // and baseline during="ladder", ladder during="ladder"
	}
	n := s.classes*(keys*key+perClass) + perTarget + perConnPath + s.budgets
	for _, turns := range s.sessionTurns {
		turn := 2 // turns{outcome="ok"} and the turn TTFT histogram
		if s.classic {
			turn += classicTurn
		}
		n += turns * turn
	}
	return n
}

// cardinalityConfig is a configuration of the shape: targets named t0…
// at the simulator base, fast enough (5 req/s) to reach the steady state
// in seconds.
func cardinalityConfig(s shape, targets int, base string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "admin: {listen: \"ADMIN\"}\nlog: {level: warn, format: json}\ndrain: {timeout: 2s}\ntelemetry: {classic_histograms: %v}\ntargets:\n", s.classic)
	apis := []string{"openai-chat", "anthropic-messages", "openai-completions"}
	for t := range targets {
		fmt.Fprintf(&b, "  - name: t%d\n    url: %s\n    api: %s\n    model: bench\n    baseline: {rate: 5}\n", t, base, apis[t%len(apis)])
		fmt.Fprintf(&b, "    server_metrics: {url: %q}\n", strings.TrimSuffix(base, "/v1")+"/metrics")
		if s.budgets > 0 {
			fmt.Fprintf(&b, "    budget: {requests_per_day: 1000000%s}\n", map[bool]string{true: ", tokens_per_day: 1000000000"}[s.budgets > 1])
		}
		b.WriteString("    classes:\n")
		for c := range s.classes {
			fmt.Fprintf(&b, "      - name: c%d\n        input: {dist: fixed, value: 16}\n        output: {dist: fixed, value: 8}\n        gates: {ttft: 1s}\n", c)
			if c < len(s.sessionTurns) {
				fmt.Fprintf(&b, "        session: {turns: %d, think: 10ms}\n", s.sessionTurns[c])
			}
		}
		if s.ladder {
			b.WriteString("    ladder: {enabled: true, schedule: {every: 24h, offset: 23h}, steps: [1, 2], step_duration: 10s, gap: 1s}\n")
		}
	}
	return b.String()
}

// TestCardinality starts `llmprobe run` against the simulator with three
// configurations and checks each target's series on the live /metrics
// against the formula of docs/metrics.md#cardinality, once the steady
// state is reached (every class and session turn has had an ok request).
// It runs in seconds, but starts processes: skipped with -short.
func TestCardinality(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the simulator and llmprobe run (-short)")
	}
	bin := llmprobe.Path(t)
	base, _ := startSim(t, bin, "--ttft", "1ms", "--token-time", "100us", "--output-tokens", "8")
	for _, tc := range []struct {
		name    string
		s       shape
		targets int
	}{
		{"2 classes, no ladder, native only", shape{classes: 2}, 2},
		{"3 classes, ladder, classic buckets", shape{classes: 3, ladder: true, classic: true}, 1},
		{"session and plain class, budgets, 3 APIs", shape{classes: 2, sessionTurns: []int{3}, budgets: 2}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startProber(t, bin, cardinalityConfig(tc.s, tc.targets, base), 30*time.Second)
			want := steadySeries(tc.s)
			var got map[string]int
			// Polls until the steady state, which a loaded host may delay;
			// the counts must then match exactly.
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(250 * time.Millisecond) {
				res, err := scrape(p.addr, acceptProto)
				if err != nil {
					t.Fatal(err)
				}
				got, _ = seriesPerTarget(res.families, true)
				if steady(got, tc.targets, want) || time.Now().After(deadline) {
					break
				}
			}
			t.Logf("want %d series per target; got %v", want, got)
			for i := range tc.targets {
				if n := got[fmt.Sprintf("t%d", i)]; n != want {
					t.Errorf("target t%d: %d series, want %d (%+v)", i, n, want, tc.s)
				}
			}
		})
	}
}

// steady reports whether every target has reached want series (the
// count only grows until the steady state).
func steady(got map[string]int, targets, want int) bool {
	for i := range targets {
		if got[fmt.Sprintf("t%d", i)] < want {
			return false
		}
	}
	return true
}
