package fleet

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// TestFingerprintStable: the fingerprint shards compare is the same as
// every earlier version wrote (gates in nanoseconds), so shards of two
// versions still agree on one ladder.
func TestFingerprintStable(t *testing.T) {
	c := ladder.Config{Steps: []float64{1, 2}, StepDuration: 30 * time.Second, Arrival: "poisson", StopAt: "capacity",
		GoodFractionTarget: 0.95, KneeFactor: 2,
		Classes: []ladder.Class{{Name: "chat", Weight: 1, Gates: stats.Gates{TTFT: 300 * time.Millisecond, E2E: 2 * time.Second}}}}
	if got := fingerprint(c, 40*time.Second, 2); got != "f669ec414784686b" {
		t.Errorf("fingerprint %s", got)
	}
}
