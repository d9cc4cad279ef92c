package ladder

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestTTFTBoundaryPlanned: the Config's TTFT boundary goes into every
// record the ladder plans (not patched in later by an executor). The
// configuration's ttft_boundary reaching the Config is wiring's
// TestTTFTBoundaryPlanned.
func TestTTFTBoundaryPlanned(t *testing.T) {
	lc := Config{Target: "t", Steps: []float64{1}, StepDuration: time.Second, MaxRate: 10, TTFTBoundary: ledger.TTFTAnyToken,
		GoodFractionTarget: 0.9, KneeFactor: 2}
	r, err := New(lc, dispatch.NewGroup(ledger.New(time.Now())), func(context.Context, *ledger.Record, func()) ledger.Result {
		return ledger.Result{}
	})
	if err != nil {
		t.Fatal(err)
	}
	st := &stepState{n: 1, rng: rand.New(rand.NewPCG(1, 1))}
	if m := r.meta(st)(0); m.TTFTBoundary != ledger.TTFTAnyToken || m.Traffic != ledger.TrafficLadder || m.Step != 1 {
		t.Errorf("planned meta = %+v, want ttft boundary %q on a ladder step-1 record", m, ledger.TTFTAnyToken)
	}
}
