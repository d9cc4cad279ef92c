package statuspage

import (
	"time"

	"github.com/llmprobe/llmprobe/internal/dashgen"
)

// The typed facts the daemon hands over besides its records: what the
// prober is doing and what configuration and budget allow. The page
// derives every word from them (card.go); the daemon builds no sentence.

// LadderProgress is a ladder running now: step Step of Steps at Rate
// req/s, started at StepStarted; StepDuration is the configured step
// length (the time it holds the baseline out of the SLO follows from it).
type LadderProgress struct {
	Step, Steps  int
	Rate         float64
	StepStarted  time.Time
	StepDuration time.Duration
	// Settle is how long after the ladder the baseline stays out of the
	// SLO (ladder.baseline_settle).
	Settle time.Duration
}

// HeldUntil is when the baseline stops being held out of the SLO if every
// remaining step runs its full length: an upper estimate (a step that
// fails its gates ends the ladder sooner).
func (l LadderProgress) HeldUntil() time.Time {
	left := max(l.Steps-l.Step+1, 1)
	return l.StepStarted.Add(time.Duration(left)*l.StepDuration + l.Settle)
}

// LadderQueued is a ladder due but waiting its turn
// (limits.max_concurrent_ladders): Ahead ladders wait before it; Trigger
// is what made it due (schedule, start, identity_change), kept for when
// it runs; Since is when it fell due.
type LadderQueued struct {
	Ahead   int
	Trigger string
	Since   time.Time
}

// Held is the target's baseline planned during ladders (labelled
// during="ladder", kept out of the SLO): how many of all baseline
// records, and until when arrivals are held out after the last ladder
// (zero: none ended yet).
type Held struct {
	Outside, During int64
	Until           time.Time
	Running         bool // a ladder runs now
}

// Configured is what the configuration enables for a target.
type Configured struct {
	// BaselineOff is true when baseline.enabled is false or its rate is
	// 0: nothing judges the target's SLO.
	BaselineOff bool
	// BaselineRate is the baseline's configured rate, req/s (all classes).
	BaselineRate float64
	// Ladder is true when the target has a ladder.
	Ladder bool
}

// ClassFacts is one configured class: its name and TTFT gate (0: the
// class has no latency gate, hence no latency SLI).
type ClassFacts struct {
	Name string
	TTFT time.Duration
}

// IdentityOf is a target identity as the daemon reads it (model and
// version; "" when not seen).
type IdentityOf struct {
	Model, Version string
}

// Regression is a capacity drop across an identity change: the last
// ladder's capacity (New, a measured figure) below Fraction × the
// previous identity's last measured capacity (Prev).
type Regression struct {
	Prev, New float64 // req/s; New is meaningless when NewNone
	// NewNone: the last ladder ran to its end and found no capacity (a
	// valid step met no gate): no capacity is never a 0 req/s capacity.
	NewNone                   bool
	PrevIdentity, NewIdentity IdentityOf
	PrevAt, NewAt             time.Time // when the two ladders finished
	Fraction                  float64   // the alert's threshold (dashgen)
}

// regressionFraction is the capacity-regression alerts' threshold, read
// where the rules read it (never a second copy of the number).
func regressionFraction() float64 { return dashgen.DefaultRuleOptions().CapacityFraction }
