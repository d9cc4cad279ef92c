package wiring

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/config"
)

// hosted is config/openai-hosted.yaml's target as it was (issue 25): 0.02
// req/s of 64 + 64 tokens against 200,000 tokens a day.
const hosted = `
targets:
  - name: openai-mini
    url: https://api.openai.com/v1
    model: m
    budget: {tokens_per_day: TOKENS, requests_per_day: REQUESTS, zone: America/New_York}
    baseline: {rate: 0.02}
    classes:
      - name: short
        input: {dist: fixed, value: 64}
        output: {dist: fixed, value: 64}
        gates: {ttft: 3s}
`

// TestExpectedUsage: a day's requests are the rate × 86,400 s (and each
// scheduled ladder's steps × step duration, and a session's turns); its
// tokens at least the prompt, the chat template and max_tokens of each.
func TestExpectedUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		yaml     string
		requests float64
		perReq   [2]float64 // tokens per request: at least, at most
	}{
		{"baseline 64+64", strings.NewReplacer("TOKENS", "0", "REQUESTS", "0").Replace(hosted), 1728, [2]float64{64 + 64 + 6, 64 + 64 + 10}},
		{"ladder every 6h", minimal + `    baseline: {rate: 1}
    classes: [{name: c, input: {dist: fixed, value: 100}, output: {dist: fixed, value: 10}}]
    ladder: {enabled: true, steps: [1, 2], step_duration: 10s, schedule: {every: 6h}}
`, 86400 + 4*30, [2]float64{116, 120}},
		{"session of 3 turns", minimal + `    baseline: {rate: 1}
    classes: [{name: c, input: {dist: fixed, value: 100}, output: {dist: fixed, value: 10}, session: {turns: 3}}]
`, 3 * 86400, [2]float64{(100 + 210 + 320 + 3*10 + 6 + 12 + 18) / 3.0, (104 + 214 + 324 + 3*10 + 10 + 20 + 30) / 3.0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := config.LoadWith(config.Options{BuiltIn: []byte(tc.yaml), Environ: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			u, err := ExpectedUsage(c.Targets[0], 0)
			if err != nil {
				t.Fatal(err)
			}
			if d := u.Requests - tc.requests; d < -1e-6 || d > 1e-6 {
				t.Errorf("requests a day %g, want %g", u.Requests, tc.requests)
			}
			if pr := u.PerRequest(); pr < tc.perReq[0] || pr > tc.perReq[1] {
				t.Errorf("tokens a request %.1f (prompt %.1f, template %.1f, output %.1f), want %g to %g", pr, u.Prompt, u.Template, u.Output, tc.perReq[0], tc.perReq[1])
			}
			if d := u.Tokens - u.Requests*u.PerRequest(); d < -1e-3 || d > 1e-3 {
				t.Errorf("tokens a day %g ≠ %g requests × %g", u.Tokens, u.Requests, u.PerRequest())
			}
		})
	}
}

// TestBudgetThatRunsOut: a budget the configuration spends before the day
// ends is refused, naming the hour it runs out and what would fit; one
// that lasts the day passes.
func TestBudgetThatRunsOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tokens, requests string
		want             []string // "" = valid
	}{
		{"200000", "2000", []string{"targets[0].budget.tokens_per_day: 200000 tokens run out at about hour 20.", "America/New_York", "1,728 requests × 13", "64 max_tokens", "raise it to at least 23", "baseline.rate at most 0.01"}},
		{"300000", "2000", nil},
		{"0", "1000", []string{"targets[0].budget.requests_per_day: 1000 requests run out at about hour 13.9 (13:53 America/New_York)", "1,728 a day", "raise it to at least 1,728"}},
		{"0", "1728", nil},
	} {
		_, err := Load(config.Options{BuiltIn: []byte(strings.NewReplacer("TOKENS", tc.tokens, "REQUESTS", tc.requests).Replace(hosted)), Environ: noEnv, Checks: Lints()})
		if tc.want == nil {
			if err != nil {
				t.Errorf("tokens %s, requests %s: %v", tc.tokens, tc.requests, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("tokens %s, requests %s: accepted", tc.tokens, tc.requests)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("tokens %s, requests %s: error does not say %q:\n%v", tc.tokens, tc.requests, w, err)
			}
		}
	}
}
