package ladder

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/hostload"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// Class is a request class of the ladder's traffic: arrivals are assigned
// classes by weight, and each class's gates judge its requests.
type Class struct {
	Name   string
	Weight float64
	Gates  stats.Gates
}

// Weights are the classes' weights, which split each step's rate among
// them and pick each arrival's class (schedule.Weights).
func Weights(classes []Class) schedule.Weights {
	return schedule.WeightsOf(classes, func(c Class) float64 { return c.Weight })
}

// Progress is reported at the start of each step, about every
// ProgressEvery while it runs, while it settles and when it ends.
type Progress struct {
	Target   string
	Step     int // 1-based
	Steps    int
	Rate     float64
	Phase    string                   // running | settling | done
	Elapsed  time.Duration            // since the step started
	Planned  int                      // arrivals planned so far in this step
	Finished int                      // of which finished
	Row      *ladderresult.LadderStep // the step, when Phase is done
}

// Config is one ladder.
type Config struct {
	Target  string
	API     string
	Classes []Class // empty: one class "default" without gates
	// TTFTBoundary is stamped on every planned record ("" = content).
	TTFTBoundary ledger.TTFTBoundary

	Steps        []float64 // offered rates, req/s
	StepDuration time.Duration
	Gap          time.Duration // pause between steps (after the previous step settled)
	MaxRate      float64       // hard maximum: a ladder with a step above it is refused
	Arrival      schedule.Kind // "" = Poisson
	Burstiness   float64       // gamma shape k (schedule.Spec.Burstiness); 0 = 1
	Seed         uint64
	MaxInFlight  int            // per step; 0 = no cap
	Admit        dispatch.Admit // budgets; optional
	// Spin spin-waits the last Spin of each arrival wait (see
	// dispatch.OpenConfig.Spin); 0 sleeps.
	Spin time.Duration

	Abort    AbortRules
	TTFTGate time.Duration // gate of Abort.TTFTGateMultiple; 0 = the smallest class TTFT gate
	// StopAt is where the ladder stops climbing ("" = StopAtCapacity).
	// Whatever it says, no step more than one past the first failing step
	// is ever offered.
	StopAt StopAt
	// ExecMarksFirstToken says the Exec calls the function FirstTokenFunc
	// returns for its context when a request's first token arrives (see
	// protocol.ObserveFirstToken). The in-step TTFT rule then also counts
	// requests still waiting for a first token past the limit; without it,
	// only finished requests are judged.
	ExecMarksFirstToken bool
	GoodFractionTarget  float64
	KneeFactor          float64

	// Settle is how long a step's requests may still run after its window
	// before the step is summarised (use the target's total timeout); those
	// still in flight then are reported as Pending (stats.Summary.Pending):
	// in no outcome count, but planned and not good, so the step's good
	// fraction counts them against it. 0 means 30s.
	Settle time.Duration
	// MidStepMin is the number of finished requests from which abort rules
	// (all but generator validity) are also checked while a step runs;
	// 0 means 20, negative disables mid-step checks.
	MidStepMin    int
	ProgressEvery time.Duration // 0 means 1s
	Validity      verdict.ValidityConfig
	// Host reads the prober host's health over each step, so that an
	// invalid step names a starved host; nil = a reader of /proc.
	Host        *hostload.Reader
	HistoryFile string         // "" = no history
	Progress    func(Progress) // optional; called from one goroutine at a time
	Now         func() time.Time

	// ServerMetrics, when set, reads the target's own metrics endpoint
	// over each step: a window opened before the step's first arrival and
	// ended once its requests settled, its view kept in the step
	// (ladderresult.LadderStep.Server, StepRow.Server). A scrape that fails never
	// fails the step: the view says it is unavailable or partial, and why.
	ServerMetrics ServerMetrics

	// Identity, when set, returns the target's identity as last seen
	// (zero while unknown): a ladder belongs to the identity it began on,
	// and stops at once when it changes (identity.go).
	Identity func() ladderresult.Identity
}

// StopAt says where a ladder stops climbing.
type StopAt string

// Where a ladder stops.
const (
	// StopAtKnee: after the knee step (the first whose TTFT p95 exceeds
	// KneeFactor × the lowest step's), or after the first failing step if
	// that comes first. For busy services: the least load past the point
	// where latency starts to climb.
	StopAtKnee StopAt = "knee"
	// StopAtCapacity (the default): after the first failing step (see
	// firstFailing: a class that met its gates at a lower step no longer
	// does, or none meets them). Capacity is then measured (bracketed): the
	// true limit lies between the capacity step and that one.
	StopAtCapacity StopAt = "capacity"
	// StopAtTop: climb to the top step, but offer at most one step past
	// the first failing step (to confirm the failure on the curve).
	StopAtTop StopAt = "top"
)

// ParseStopAt parses "knee", "capacity" (or "") and "top".
func ParseStopAt(s string) (StopAt, error) {
	switch StopAt(s) {
	case "", StopAtCapacity:
		return StopAtCapacity, nil
	case StopAtKnee, StopAtTop:
		return StopAt(s), nil
	}
	return "", fmt.Errorf("ladder: unknown stop_at %q (want knee, capacity or top)", s)
}

// UnmarshalText reads ladder.stop_at as configuration writes it
// (ParseStopAt's names, "" being capacity); the error names the choices,
// the caller adds the key.
func (s *StopAt) UnmarshalText(b []byte) error {
	v, err := ParseStopAt(string(b))
	if err != nil {
		return fmt.Errorf("want knee, capacity or top, got %q", string(b))
	}
	*s = v
	return nil
}

// Valid reports whether s is a stop rule ("" is capacity): one read by
// UnmarshalText always is; one set in code is checked by New.
func (s StopAt) Valid() bool {
	_, err := ParseStopAt(string(s))
	return err == nil
}

// stepsPastFailure is how many steps may follow the first failing step.
func (s StopAt) stepsPastFailure() int {
	if s == StopAtTop {
		return 1
	}
	return 0
}
