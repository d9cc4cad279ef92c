package telemetry

import (
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestWatchLadderTurns: the two gauges read the queue at every scrape,
// carry the region when set, and are two series whatever the targets.
func TestWatchLadderTurns(t *testing.T) {
	for _, region := range []string{"", "eu-west"} {
		reg := prometheus.NewRegistry()
		now := LadderTurns{Running: 1, Waiting: 3}
		if err := WatchLadderTurns(reg, region, func() LadderTurns { return now }); err != nil {
			t.Fatal(err)
		}
		lbl := ""
		if region != "" {
			lbl = `{region="eu-west"}`
		}
		for _, step := range []LadderTurns{{1, 3}, {1, 0}, {0, 0}} {
			now = step
			want := "# HELP llmprobe_ladders_running " + spec(metricLaddersRunning).Help + "\n# TYPE llmprobe_ladders_running gauge\n" +
				"llmprobe_ladders_running" + lbl + " " + strconv.Itoa(step.Running) + "\n" +
				"# HELP llmprobe_ladders_waiting " + spec(metricLaddersWaiting).Help + "\n# TYPE llmprobe_ladders_waiting gauge\n" +
				"llmprobe_ladders_waiting" + lbl + " " + strconv.Itoa(step.Waiting) + "\n"
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
				t.Errorf("region %q, %+v: %v", region, step, err)
			}
		}
		if err := WatchLadderTurns(reg, region, func() LadderTurns { return now }); err == nil {
			t.Error("registered twice without an error")
		}
	}
}
