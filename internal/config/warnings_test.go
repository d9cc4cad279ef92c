package config

import (
	"strings"
	"testing"
)

// TestWarnings: a class without a latency gate is warned of (its ladder's
// capacity then ignores latency too); a class with any gate is not.
func TestWarnings(t *testing.T) {
	t.Parallel()
	const target = "targets:\n  - name: t\n    url: http://127.0.0.1:8000/v1\n    model: m\n"
	for _, tc := range []struct {
		name, extra string
		want        []string // substrings of the warnings, one a class; nil: none
	}{
		{"gated", "    classes: [{name: a, gates: {e2e: 5s}}]\n", nil},
		{"ungated", "    classes: [{name: a, gates: {ttft: 1s}}, {name: b}]\n", []string{"targets[0].classes[1].gates: no latency gate (ttft, tpot or e2e): class b has no latency SLI, only availability; set gates.ttft"}},
		{"ungated with a ladder", "    classes: [{name: a}]\n    ladder: {enabled: true, steps: [1, 2], schedule: {every: 1h}}\n", []string{"class a has no latency SLI", "its ladder's capacity ignores latency"}},
	} {
		c, err := LoadWith(Options{BuiltIn: []byte(target + tc.extra), Environ: func() []string { return nil }})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		w := c.Warnings()
		if tc.want == nil {
			if len(w) > 0 {
				t.Errorf("%s: warnings %v", tc.name, w)
			}
			continue
		}
		if len(w) != 1 {
			t.Fatalf("%s: %d warnings, want 1: %v", tc.name, len(w), w)
		}
		for _, s := range tc.want {
			if !strings.Contains(w[0].Error(), s) {
				t.Errorf("%s: %q lacks %q", tc.name, w[0].Error(), s)
			}
		}
	}
}
