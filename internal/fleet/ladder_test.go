package fleet

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestNewLadderReadsTheShareRunner: a fleet ladder is its share runner's
// configuration (checked once, by ladder.New) with the fleet's rates: its
// timetable is the runner's, and fleet rates for another number of steps
// are refused.
func TestNewLadderReadsTheShareRunner(t *testing.T) {
	led := ledger.New(time.Now())
	g := dispatch.NewGroup(led)
	defer g.Drain(context.Background(), time.Second)
	cfg := ladder.Config{Target: "t", Classes: []ladder.Class{{Name: "chat", Weight: 1, Gates: stats.Gates{TTFT: time.Second}}},
		Steps: []float64{1, 2}, StepDuration: 3 * time.Second, Gap: MinGap, MaxRate: 10, GoodFractionTarget: 0.5, KneeFactor: 2,
		Settle: time.Second, Validity: verdict.ValidityConfig{MaxLagP99: 10 * time.Millisecond}}
	r, err := ladder.New(cfg, g, okExec(led))
	if err != nil {
		t.Fatal(err)
	}
	node, err := NewNode(NodeOptions{Identity: Identity{0, 2}, Peers: Peers{URLs: []string{"http://127.0.0.1:1", "http://127.0.0.1:2"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.NewLadder(LadderOptions{Steps: []float64{2}, Runner: r, LedgerNow: led.Now}); err == nil || !strings.Contains(err.Error(), "1 fleet steps for a share runner of 2") {
		t.Errorf("one fleet step for a runner of two: err = %v", err)
	}
	l, err := node.NewLadder(LadderOptions{Steps: []float64{2, 4}, Runner: r, LedgerNow: led.Now})
	if err != nil {
		t.Fatal(err)
	}
	if c := l.Config(); !slices.Equal(c.Steps, []float64{2, 4}) || c.StepDuration != 3*time.Second || c.Target != "t" {
		t.Errorf("fleet ladder config: steps %v, step duration %s, target %q", c.Steps, c.StepDuration, c.Target)
	}
	if want := 3*time.Second + time.Second + MinGap; l.period != want {
		t.Errorf("period %s, want %s (step, settle and gap)", l.period, want)
	}
}
