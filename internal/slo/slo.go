package slo

import "time"

// The objectives of the shipped SLOs (fractions of good events) and the
// minimum-event guard.
const (
	// AvailabilityObjective is the target good/planned ratio of baseline
	// traffic (outside ladders).
	AvailabilityObjective = 0.995
	// LatencyObjective is the target fraction of first tokens within the
	// class's TTFT gate.
	LatencyObjective = 0.99
	// MinBadEvents is the minimum-event guard: a burn-rate alert also
	// needs at least this many bad requests in its long window, so that
	// low-rate probing never pages or tickets on a single failure.
	MinBadEvents = 3
)

// Tier is one multiwindow burn-rate condition: the error budget burns at
// least Factor times the sustainable rate over both the Long and the
// Short window.
type Tier struct {
	Long, Short time.Duration
	Factor      float64
}

// BurnRate is the error ratio a tier's Factor means for objective: the
// ratio of bad events above which the budget burns Factor times too fast.
func (t Tier) BurnRate(objective float64) float64 { return t.Factor * (1 - objective) }

// PageTiers are the tiers that page: 14.4× over 1h and 5m (2 % of a
// 30-day budget in an hour), 6× over 6h and 30m (5 % in six hours).
func PageTiers() []Tier {
	return []Tier{{time.Hour, 5 * time.Minute, 14.4}, {6 * time.Hour, 30 * time.Minute, 6}}
}

// TicketTiers are the tiers that open a ticket: 3× over 1d and 2h, 1×
// over 3d and 6h.
func TicketTiers() []Tier {
	return []Tier{{24 * time.Hour, 2 * time.Hour, 3}, {72 * time.Hour, 6 * time.Hour, 1}}
}
