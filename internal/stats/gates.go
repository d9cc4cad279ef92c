package stats

import (
	"encoding/json"
	"fmt"
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
// A zero field means no gate on that figure. It is also a class's gates in
// the configuration (gates.ttft, gates.tpot, gates.e2e: durations written
// as text, read by config as every time.Duration is) and the flags
// (--slo-ttft, …): one type from the file to the judgement.
type Gates struct {
	TTFT time.Duration `koanf:"ttft"`
	TPOT time.Duration `koanf:"tpot"`
	E2E  time.Duration `koanf:"e2e"`
}

// gatesText is Gates as JSON writes it: durations as text ("100ms"), as
// the configuration does (/config shows what the file says).
type gatesText struct {
	TTFT string `json:"ttft"`
	TPOT string `json:"tpot"`
	E2E  string `json:"e2e"`
}

// MarshalJSON writes each gate as a duration text, "0s" for none.
func (g Gates) MarshalJSON() ([]byte, error) {
	return json.Marshal(gatesText{g.TTFT.String(), g.TPOT.String(), g.E2E.String()})
}

// UnmarshalJSON reads each gate as a duration text (as MarshalJSON writes
// it) or a number of nanoseconds (as a legacy ladder result stored it); a
// negative gate is refused.
func (g *Gates) UnmarshalJSON(b []byte) error {
	var raw struct{ TTFT, TPOT, E2E json.RawMessage }
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	var out Gates
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		d    *time.Duration
	}{{"ttft", raw.TTFT, &out.TTFT}, {"tpot", raw.TPOT, &out.TPOT}, {"e2e", raw.E2E, &out.E2E}} {
		if len(f.raw) == 0 || string(f.raw) == "null" {
			continue
		}
		var s string
		if err := json.Unmarshal(f.raw, &s); err == nil {
			d, err := time.ParseDuration(s)
			if err != nil {
				return fmt.Errorf("gate %s: invalid duration %q", f.name, s)
			}
			*f.d = d
		} else if err := json.Unmarshal(f.raw, (*int64)(f.d)); err != nil {
			return fmt.Errorf("gate %s: want a duration text or nanoseconds, got %s", f.name, f.raw)
		}
		if *f.d < 0 {
			return fmt.Errorf("gate %s: negative duration %s", f.name, *f.d)
		}
	}
	*g = out
	return nil
}

// IsZero reports whether no gate is set.
func (g Gates) IsZero() bool { return g == Gates{} }
