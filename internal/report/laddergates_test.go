package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/stats"
)

// A ladder judged by class gates says so: one class's gates, or each
// class's, never "none".
func TestLadderGatesPerClass(t *testing.T) {
	for _, tc := range []struct {
		gates map[string]stats.Gates
		want  []string
	}{
		{map[string]stats.Gates{"default": {TTFT: 300 * time.Millisecond}}, []string{"gates: TTFT ≤ 300.0ms;"}},
		{map[string]stats.Gates{"chat": {TTFT: time.Second}, "long": {E2E: 5 * time.Second}}, []string{"chat: TTFT ≤ 1.000s", "long: e2e ≤ 5.000s"}},
		{nil, []string{"gates: none"}},
	} {
		var b bytes.Buffer
		if err := LadderText(&b, stats.LadderResult{Target: "t", ClassGates: tc.gates, GoodFractionTarget: 0.9, KneeFactor: 2}); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("gates %v: report lacks %q:\n%s", tc.gates, w, b.String())
			}
		}
	}
}
