package config

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/stats"
)

// TestGatesAreStatsGates: a class's gates are read from duration text
// straight into stats.Gates (no mirror type): parsed once on their key,
// refused there when malformed, shown as text in /config's JSON, and
// read back by Redacted.
func TestGatesAreStatsGates(t *testing.T) {
	class := func(gates string) string {
		return minimal + "    classes:\n      - name: a\n        weight: 1\n        gates: " + gates + "\n"
	}
	c, err := LoadWith(Options{Path: write(t, class("{ttft: 250ms, e2e: 1m30s}")), Environ: func() []string { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	want := stats.Gates{TTFT: 250 * time.Millisecond, E2E: 90 * time.Second}
	if got := c.Targets[0].Classes[0].Gates; got != want {
		t.Errorf("gates %+v, want %+v", got, want)
	}
	b, err := json.Marshal(c.Targets[0].Classes[0])
	if err != nil || !strings.Contains(string(b), `"gates":{"ttft":"250ms","tpot":"0s","e2e":"1m30s"}`) {
		t.Errorf("class JSON %s (%v)", b, err)
	}
	if got := c.Redacted().Targets[0].Classes[0].Gates; got != want {
		t.Errorf("redacted gates %+v", got)
	}
	for _, bad := range []struct{ gates, want string }{
		{"{ttft: 10q}", `c.yaml:9:17: targets[0].classes[0].gates.ttft: invalid duration "10q"`},
		{"{e2e: -1s}", `targets[0].classes[0].gates.e2e: negative duration "-1s"`},
		{"{tpot: 5}", `targets[0].classes[0].gates.tpot: want a duration string like "10s", got 5`},
		{"{ttfb: 1s}", `targets[0].classes[0].gates.ttfb: unknown key`},
	} {
		_, err := LoadWith(Options{Path: write(t, class(bad.gates)), Environ: func() []string { return nil }})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %s", bad.gates, err, bad.want)
		}
	}
}
