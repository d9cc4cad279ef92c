package stats

import "time"

// LadderStep is one step of a rate ladder: the rate it offered and the
// summary of the arrivals planned during it.
type LadderStep struct {
	Index   int     // 1-based
	Rate    float64 // offered (requested) rate, req/s
	Summary Summary // cohort: arrivals planned during the step
	// Aborted is true when the ladder stopped during or after this step;
	// AbortReason says which rule tripped.
	Aborted     bool
	AbortReason string
}

// LadderResult is one finished ladder. CapacityStep and KneeStep are
// 1-based step indexes, 0 when none.
type LadderResult struct {
	Target             string
	Started            time.Time // wall clock, for humans (zero when unknown)
	Steps              []LadderStep
	Gates              Gates
	ClassGates         map[string]Gates // per class; when set, Gates is ignored by reports
	GoodFractionTarget float64          // a step counts toward capacity only at or above this good fraction
	KneeFactor         float64          // the knee is the first step with TTFT p95 > KneeFactor × the lowest step's

	Capacity     float64 // req/s; 0 when no step qualified
	CapacityStep int
	Knee         float64 // req/s; 0 when no knee was found
	KneeStep     int
	Aborted      bool
	AbortReason  string
	// Stopped says why the ladder stopped below its top step by its
	// stop_at rule (not an abort); "" when it did not.
	Stopped string
}

// Capacity returns the highest step rate whose generator was valid and whose
// good fraction (ok and within every gate, over planned) reached target,
// with its 1-based step index; (0, 0) when no step qualified. Steps are not
// assumed sorted.
func Capacity(steps []LadderStep, target float64) (rate float64, step int) {
	for i, s := range steps {
		if !s.Summary.Validity.Valid || s.Summary.Planned == 0 || s.Summary.GoodFraction < target {
			continue
		}
		if step == 0 || s.Rate > rate {
			rate, step = s.Rate, i+1
		}
	}
	return rate, step
}

// Knee returns the first step, in rate order, whose TTFT p95 exceeds factor
// times the TTFT p95 of the lowest-rate step that has one; (0, 0) when there
// is none. Steps without TTFT samples are skipped.
func Knee(steps []LadderStep, factor float64) (rate float64, step int) {
	base := -1
	for i, s := range steps {
		if s.Summary.TTFT.Count == 0 {
			continue
		}
		if base < 0 || s.Rate < steps[base].Rate {
			base = i
		}
	}
	if base < 0 {
		return 0, 0
	}
	limit := time.Duration(factor * float64(steps[base].Summary.TTFT.P95))
	for i, s := range steps {
		if s.Summary.TTFT.Count == 0 || s.Summary.TTFT.P95 <= limit {
			continue
		}
		if step == 0 || s.Rate < rate {
			rate, step = s.Rate, i+1
		}
	}
	return rate, step
}
