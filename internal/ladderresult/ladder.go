package ladderresult

import (
	"math"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// LadderStep is one step of a rate ladder: the rate it offered and the
// summary of the arrivals planned during it. Its JSON (ladderjson.go) is
// the summary's figures in seconds, with the step's verdicts.
type LadderStep struct {
	Index   int           // 1-based
	Rate    float64       // offered (requested) rate, req/s
	Summary stats.Summary // cohort: arrivals planned during the step, every class
	// Classes are the step's figures per request class, each over the
	// class's own records judged by its own gates (empty for a ladder
	// without classes). A class's Summary.Validity is the step's: the
	// classes share one generator.
	Classes []ClassStep
	// Aborted is true when the ladder stopped during or after this step;
	// AbortReason says which rule tripped.
	Aborted     bool
	AbortReason string
	// IdentityStart and IdentityEnd are the target's identity when the
	// step began and when it was summarised (zero when not watched).
	IdentityStart, IdentityEnd Identity
	// Server is what the target's own metrics endpoint said over the step
	// (server_metrics), nil when none is configured; a view that could
	// not be read says so (Unavailable, Partial) rather than being nil.
	Server *servermetrics.View
}

// ClassStep is one class's share of a ladder step.
type ClassStep struct {
	Class   string
	Rate    float64       // the class's offered rate: step rate × its weight share
	Summary stats.Summary // the class's records only, judged by its gates
}

// TTFTGap is the client's TTFT p50/p95 minus the server's (the network and
// queueing outside the server's clock: a difference of percentiles, not a
// percentile of differences); nil without a server view or client TTFTs.
func (s LadderStep) TTFTGap() *servermetrics.TTFTGap {
	if s.Server == nil {
		return nil
	}
	return servermetrics.Gap(*s.Server, s.Summary.TTFT.Count, s.Summary.TTFT.P50, s.Summary.TTFT.P95)
}

// Class returns the step's figures for class and whether it has them.
func (s LadderStep) Class(class string) (ClassStep, bool) {
	for _, c := range s.Classes {
		if c.Class == class {
			return c, true
		}
	}
	return ClassStep{}, false
}

// Bound says what a capacity figure is.
type Bound string

// Capacity bounds.
const (
	// BoundMeasured: a valid step above the capacity step failed its gates,
	// so the limit lies between the capacity step's rate and that step's.
	BoundMeasured Bound = "measured"
	// BoundLower: no valid step above the capacity step failed its gates
	// (it was the top step, or the steps above were invalid or never run):
	// the capacity is at least this, and may be much more.
	BoundLower Bound = "lower"
)

// Verdict is a ladder's capacity and knee, judged over valid steps only.
// CapacityStep and KneeStep are 1-based step numbers (LadderStep.Index), 0
// when none.
type Verdict struct {
	Capacity      float64 `json:"capacity"`                 // req/s; 0 when no step qualified
	CapacityStep  int     `json:"capacity_step"`            // 0 when none
	CapacityBound Bound   `json:"capacity_bound,omitempty"` // "" when no step qualified
	Knee          float64 `json:"knee"`                     // req/s; 0 when no knee
	KneeStep      int     `json:"knee_step"`
}

// LadderResult is one finished (or aborted) ladder and its verdicts: the
// one model a lone prober's runner produces, a fleet's coordinator judges
// over its merged steps, internal/report renders, the history file stores
// (one JSON line) and `ladder --json` prints. Its JSON is the versioned
// schema of ladderjson.go (LadderSchemaVersion; docs/ladder.md "Result
// schema"); lines of the older flat history format decode too.
type LadderResult struct {
	Target       string
	Trigger      string    // schedule | identity_change | manual
	Started      time.Time // wall clock (zero when unknown)
	Finished     time.Time
	StepDuration time.Duration // asked for; a step cut short says so (Summary.WindowAsked)
	Steps        []LadderStep
	Gates        stats.Gates
	ClassGates   map[string]stats.Gates // per class; when set, Gates is ignored by reports
	// GoodFractionTarget: a step counts toward capacity only at or above
	// this good fraction; KneeFactor: the knee is the first step with TTFT
	// p95 > KneeFactor × the lowest step's.
	GoodFractionTarget float64
	KneeFactor         float64

	Verdict // over every class together (each record judged by its class's gates)
	// Classes are the verdicts per class (each over the class's own
	// records and gates, in the class's offered rate), in config order.
	Classes     []ClassVerdict
	Aborted     bool
	AbortReason string
	// StopAt is where the ladder was told to stop climbing (knee,
	// capacity, top); Stopped says why it stopped below its top step by
	// that rule (not an abort), "" when it did not.
	StopAt  string
	Stopped string
	// Identity is the target's identity when the ladder began: the
	// deployment its capacity belongs to (zero when not watched).
	Identity Identity
	// Partial says why the ladder is a partial result of Identity: the
	// cause (identity_changed, target_restarted) that cut it; "" when it
	// measured one identity throughout. A partial ladder's capacity is a
	// lower bound; ChangedTo is the identity it changed to (zero when it
	// did not, or is unknown).
	Partial   cause.Cause
	ChangedTo Identity
}

// ClassVerdict is one class's capacity and knee; rates are the class's own
// offered rate (step rate × its weight share).
type ClassVerdict struct {
	Class string `json:"class"`
	Verdict
}

// JudgeLadder returns the capacity and knee over every class together and
// for each named class, with step positions given as the steps' Index.
func JudgeLadder(steps []LadderStep, classes []string, target, factor float64) (Verdict, []ClassVerdict) {
	index := func(pos int) int {
		if pos == 0 {
			return 0
		}
		return steps[pos-1].Index
	}
	v := Judge(steps, target, factor)
	v.CapacityStep, v.KneeStep = index(v.CapacityStep), index(v.KneeStep)
	var per []ClassVerdict
	for _, c := range classes {
		cv := JudgeClass(steps, c, target, factor)
		cv.CapacityStep, cv.KneeStep = index(cv.CapacityStep), index(cv.KneeStep)
		per = append(per, ClassVerdict{Class: c, Verdict: cv})
	}
	return v, per
}

// CommonGates are the gates every record of a ladder was judged by: its
// Gates without class gates, else the gates all its classes share; false
// when classes have gates of their own. A ladder's gates live in its class
// gates (--slo-ttft sets the one class's), so reading Gates alone would
// say "none" of a gated ladder.
func (r LadderResult) CommonGates() (stats.Gates, bool) {
	var g stats.Gates
	first := true
	for _, cg := range r.ClassGates {
		if !first && cg != g {
			return stats.Gates{}, false
		}
		g, first = cg, false
	}
	if first {
		return r.Gates, true
	}
	return g, true
}

// TTFTBoundary is the TTFT boundary of the ladder's steps.
func (r LadderResult) TTFTBoundary() ledger.TTFTBoundary {
	for _, st := range r.Steps {
		if st.Summary.TTFTBoundary != ledger.TTFTContent {
			return st.Summary.TTFTBoundary
		}
	}
	return ledger.TTFTContent
}

// InvalidSteps returns the 1-based positions of the steps whose generator
// was invalid (never used for capacity or knee).
func (r LadderResult) InvalidSteps() []int {
	var out []int
	for i, s := range r.Steps {
		if !s.Summary.Validity.Valid {
			out = append(out, i+1)
		}
	}
	return out
}

// point is one step as the capacity and knee rules see it.
type point struct {
	rate  float64
	valid bool
	s     stats.Summary
}

// Judge returns the capacity and knee over every class together. A
// saturated step (Summary.Steady) is never the capacity (Qualifies) and is at or
// past the knee. Its CapacityStep and KneeStep are 1-based positions in
// steps, not the steps' Index (JudgeLadder gives the Index).
func Judge(steps []LadderStep, target, factor float64) Verdict {
	pts := make([]point, len(steps))
	for i, s := range steps {
		pts[i] = point{rate: s.Rate, valid: s.Summary.Validity.Valid, s: s.Summary}
	}
	return judge(pts, target, factor)
}

// JudgeClass returns one class's capacity and knee: over the class's own
// figures at each step (its records, its gates, its offered rate), on the
// steps whose generator was valid. A step without the class is skipped.
func JudgeClass(steps []LadderStep, class string, target, factor float64) Verdict {
	pts := make([]point, len(steps))
	for i, s := range steps {
		c, ok := s.Class(class)
		pts[i] = point{rate: c.Rate, valid: ok && s.Summary.Validity.Valid, s: c.Summary}
	}
	return judge(pts, target, factor)
}

func judge(pts []point, target, factor float64) Verdict {
	var v Verdict
	// The capacity lies below the first valid saturated step: a queue that
	// grew at a lower rate is not healed by a higher one's good fraction.
	ceiling := math.Inf(1)
	for _, p := range pts {
		if p.valid && p.s.Saturated() {
			ceiling = min(ceiling, p.rate)
		}
	}
	for i, p := range pts {
		if p.valid && stats.Qualifies(p.s, target) && p.rate < ceiling && (v.CapacityStep == 0 || p.rate > v.Capacity) {
			v.Capacity, v.CapacityStep = p.rate, i+1
		}
	}
	if v.CapacityStep > 0 {
		v.CapacityBound = BoundLower
		for _, p := range pts {
			if p.valid && p.s.Planned+p.s.Pending > 0 && p.rate > v.Capacity && !stats.Qualifies(p.s, target) {
				v.CapacityBound = BoundMeasured
				break
			}
		}
	}
	base := -1
	for i, p := range pts {
		if !p.valid || p.s.TTFT.Count == 0 {
			continue
		}
		if base < 0 || p.rate < pts[base].rate {
			base = i
		}
	}
	limit := time.Duration(-1) // no base: only a saturated step is a knee
	if base >= 0 {
		limit = time.Duration(factor * float64(pts[base].s.TTFT.P95))
	}
	for i, p := range pts {
		// A saturated step is past the knee whatever its TTFT p95 over a
		// short window: the knee is never above the first saturated step.
		past := p.s.Saturated() || (limit >= 0 && p.s.TTFT.Count > 0 && p.s.TTFT.P95 > limit)
		if !p.valid || !past {
			continue
		}
		if v.KneeStep == 0 || p.rate < v.Knee {
			v.Knee, v.KneeStep = p.rate, i+1
		}
	}
	return v
}

// SaturatedSteps returns the 1-based positions of the valid steps judged
// saturated (never the capacity; at or past the knee).
func (r LadderResult) SaturatedSteps() []int {
	var out []int
	for i, s := range r.Steps {
		if s.Summary.Validity.Valid && s.Summary.Saturated() {
			out = append(out, i+1)
		}
	}
	return out
}
