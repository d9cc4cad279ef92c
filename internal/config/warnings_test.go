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

// TestFleetHint: a file that names a fleet's peers but not its size is
// checked as one prober; its first rate error says so once, with the
// smallest size every rate fits; a sized fleet or a prober alone get no
// hint.
func TestFleetHint(t *testing.T) {
	t.Parallel()
	const body = "limits: {max_rate: 300}\n%stargets:\n  - name: t\n    url: http://127.0.0.1:8000/v1\n    model: m\n" +
		"    classes: [{name: a, gates: {ttft: 1s}}]\n    ladder: {enabled: true, steps: [400, 900], schedule: {every: 1h}}\n"
	for _, tc := range []struct {
		fleet string
		hints int
	}{
		{"fleet: {shard: auto, peers: [llmprobe-peers]}\n", 1},
		{"", 0},
		{"fleet: {shard: auto, shards: 2, peers: [llmprobe-peers]}\n", 0},
	} {
		_, err := LoadWith(Options{BuiltIn: []byte(strings.Replace(body, "%s", tc.fleet, 1)), Environ: func() []string { return nil }})
		if err == nil {
			t.Fatalf("%q: 900 req/s accepted", tc.fleet)
		}
		if n := strings.Count(err.Error(), "validate it with --fleet.shards N (here N ≥ 3)"); n != tc.hints {
			t.Errorf("%q: %d hints, want %d:\n%v", tc.fleet, n, tc.hints, err)
		}
	}
}
