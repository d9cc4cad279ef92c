package telemetry

import (
	"fmt"

	"github.com/llmprobe/llmprobe/internal/metricdef"
	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of the prober's ladder queue (limits.max_concurrent_ladders).
const (
	metricLaddersRunning = metricdef.LaddersRunning
	metricLaddersWaiting = metricdef.LaddersWaiting
)

// LadderTurns are the prober's ladders now: running, and due but waiting
// their turn (limits.max_concurrent_ladders), read at scrape time.
type LadderTurns struct {
	Running, Waiting int
}

// WatchLadderTurns registers llmprobe_ladders_running and
// llmprobe_ladders_waiting with reg, read from read at every scrape: two
// series per prober, whatever the number of targets. region, when set, is
// their constant region label (as on the Recorder's series).
func WatchLadderTurns(reg prometheus.Registerer, region string, read func() LadderTurns) error {
	var cl prometheus.Labels
	if region != "" {
		cl = prometheus.Labels{"region": region}
	}
	for _, g := range []struct {
		name string
		v    func(LadderTurns) int
	}{
		{metricLaddersRunning, func(t LadderTurns) int { return t.Running }},
		{metricLaddersWaiting, func(t LadderTurns) int { return t.Waiting }},
	} {
		s := spec(g.name)
		f := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: s.Name, Help: s.Help, ConstLabels: cl},
			func() float64 { return float64(g.v(read())) })
		if err := reg.Register(f); err != nil {
			return fmt.Errorf("telemetry: register %s: %w", s.Name, err)
		}
	}
	return nil
}
