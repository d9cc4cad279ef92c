package telemetry

import (
	"fmt"
	"strconv"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// MaxTurnLabel bounds the `turn` label: config bounds a session's turns at
// or below it (a test in wiring holds the two together), and a record with
// a turn above it is not recorded in the per-turn series (counted as a
// dropped label).
const MaxTurnLabel = 32

// turnLabels are the turn label values, "1".."32", built once.
var turnLabels = func() []string {
	out := make([]string, MaxTurnLabel+1)
	for i := 1; i <= MaxTurnLabel; i++ {
		out[i] = strconv.Itoa(i)
	}
	return out
}()

// recordTurn records a session's turn in the per-turn series (a record
// outside sessions, Turn 0, in none). The series are created on a turn's
// first record: a target and class have at most MaxTurnLabel turns ×
// (outcomes + 1) of them. target and class are the record's label values,
// already sanitised (promSeries): no cleaning per record.
func (m *promMetrics) recordTurn(target, class string, r *ledger.Record, drop func(reason, what string, err error)) {
	if r.Turn < 1 {
		return
	}
	if r.Turn > MaxTurnLabel {
		drop(DropLabel, metricTurns, fmt.Errorf("turn %d above %d", r.Turn, MaxTurnLabel))
		return
	}
	turn := turnLabels[r.Turn]
	c, err := m.turns.GetMetricWithLabelValues(target, class, turn, string(r.Outcome))
	if err != nil {
		drop(DropLabel, metricTurns, err)
		return
	}
	c.Inc()
	if r.Outcome != ledger.OK {
		return
	}
	if v, ok := r.TTFT(); ok {
		o, err := m.turnTTFT.GetMetricWithLabelValues(target, class, turn)
		if err != nil {
			drop(DropLabel, metricTurnTTFT, err)
			return
		}
		o.Observe(v.Seconds())
	}
}
