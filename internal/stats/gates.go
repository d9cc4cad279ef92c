package stats

import (
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// GateCheck is the verdict of one record against its gates.
type GateCheck struct {
	Good         bool // ok and every set gate met
	MissTTFT     bool // TTFT above its gate, or no content at all
	MissTPOT     bool // TPOT above its gate
	MissE2E      bool // e2e above its gate
	Unverifiable bool // a TPOT gate is set but the server reported no usage: skipped, not failed
}

// CheckGates judges one record: good means outcome ok and every non-zero
// gate met, TTFT and e2e measured from the arrival's first planned time
// (ledger.Record.ArrivalTTFT/ArrivalE2E: on a retry, the failed attempts and
// backoffs the user waited through count; otherwise the record's own
// planned time). A set TTFT or E2E
// gate fails a record whose figure is undefined. A TPOT gate is met
// vacuously when the server reported one completion token or none, and is
// skipped when it reported no usage (flagged Unverifiable, so reports can
// say how many went unchecked) — the same rule as telemetry's good counter.
func CheckGates(r *ledger.Record, g Gates) GateCheck {
	if r.Outcome != ledger.OK {
		return GateCheck{}
	}
	c := GateCheck{}
	if g.TTFT > 0 {
		d, ok := r.ArrivalTTFT()
		c.MissTTFT = !ok || d > g.TTFT
	}
	if g.E2E > 0 {
		d, ok := r.ArrivalE2E()
		c.MissE2E = !ok || d > g.E2E
	}
	if g.TPOT > 0 {
		switch d, ok := r.TPOT(); {
		case ok:
			c.MissTPOT = d > g.TPOT
		case r.Usage.Known && r.Usage.Completion <= 1:
			// one token or none: no per-token time to gate
		default:
			c.Unverifiable = true
		}
	}
	c.Good = !c.MissTTFT && !c.MissTPOT && !c.MissE2E
	return c
}

// IsGood reports whether r is ok and meets every gate in g.
func IsGood(r *ledger.Record, g Gates) bool { return CheckGates(r, g).Good }

// Gates are latency limits a successful request must meet to count as good.
// A zero field means no gate on that figure.
type Gates struct {
	TTFT time.Duration `json:"ttft,omitempty"`
	TPOT time.Duration `json:"tpot,omitempty"`
	E2E  time.Duration `json:"e2e,omitempty"`
}

// IsZero reports whether no gate is set.
func (g Gates) IsZero() bool { return g == Gates{} }
