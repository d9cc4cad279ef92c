package slo

// State is a target's state as the shipped burn-rate rules judge it, worst
// first: DOWN, FAILING, SLOW, OK, NO DATA.
type State string

// The states of a target.
const (
	// StateDown: nothing sent in the short window succeeded (at least
	// MinBadEvents failed).
	StateDown State = "DOWN"
	// StateFailing: the availability SLI burns at the first page tier.
	StateFailing State = "FAILING"
	// StateSlow: the latency SLI burns at the first page tier.
	StateSlow State = "SLOW"
	// StateOK: both SLIs have events and neither burns at the page tier.
	StateOK State = "OK"
	// StateNoData: no request was sent in the long window.
	StateNoData State = "NO DATA"
)

// rank orders states, worst highest.
func (s State) rank() int {
	switch s {
	case StateDown:
		return 4
	case StateFailing:
		return 3
	case StateSlow:
		return 2
	case StateOK:
		return 1
	}
	return 0
}

// Worse reports whether s is worse than o.
func (s State) Worse(o State) bool { return s.rank() > o.rank() }

// Counts are one window's SLI events: Sent and Failed for availability
// (Availability), LatencyEvents and LatencyBad for latency.
type Counts struct {
	Sent, Failed              int
	LatencyEvents, LatencyBad int
}

// Burning reports whether bad of n events, over the tier's short (bad,
// n) and long window, burn the budget of objective at least the tier's
// factor in both, with at least MinBadEvents bad in the long one: the
// alert rule's arm.
func Burning(t Tier, objective float64, badS, nS, badL, nL int) bool {
	if nS == 0 || nL == 0 || badL < MinBadEvents {
		return false
	}
	th := t.BurnRate(objective)
	return float64(badS)/float64(nS) > th && float64(badL)/float64(nL) > th
}

// Judge is the state of one SLI series (a target's class) from its short
// and long windows of the first page tier (5 and 60 minutes).
func Judge(short, long Counts) State {
	page := PageTiers()[0]
	switch {
	case long.Sent == 0:
		return StateNoData
	case short.Sent >= MinBadEvents && short.Failed == short.Sent:
		return StateDown
	case Burning(page, AvailabilityObjective, short.Failed, short.Sent, long.Failed, long.Sent):
		return StateFailing
	case Burning(page, LatencyObjective, short.LatencyBad, short.LatencyEvents, long.LatencyBad, long.LatencyEvents):
		return StateSlow
	}
	return StateOK
}
