package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Kind is an arrival process.
type Kind string

// Arrival processes.
const (
	Poisson  Kind = "poisson"  // exponential inter-arrival gaps (the default)
	Constant Kind = "constant" // evenly spaced arrivals
	Gamma    Kind = "gamma"    // gamma-distributed gaps with shape Spec.Burstiness
)

// Kinds lists the arrival processes in a stable order (for flags and docs).
var Kinds = []Kind{Poisson, Constant, Gamma}

// ParseKind returns the Kind named s ("" means Poisson).
func ParseKind(s string) (Kind, error) {
	switch k := Kind(strings.ToLower(strings.TrimSpace(s))); k {
	case "":
		return Poisson, nil
	case Poisson, Constant, Gamma:
		return k, nil
	default:
		return "", fmt.Errorf("schedule: unknown arrival process %q (want poisson, constant or gamma)", s)
	}
}

// UnmarshalText reads an arrival process as configuration writes it
// (baseline.arrival, ladder.arrival): ParseKind's names, "" being Poisson.
// The error names the choices; the caller adds the key.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return fmt.Errorf("want poisson, constant or gamma, got %q", string(b))
	}
	*k = v
	return nil
}

// Valid reports whether k is an arrival process ("" is Poisson): a Kind
// read by UnmarshalText always is; one set in code is checked by it.
func (k Kind) Valid() bool {
	switch k {
	case "", Poisson, Constant, Gamma:
		return true
	}
	return false
}

// Spec chooses the arrival process.
type Spec struct {
	Kind       Kind    // "" means Poisson
	Burstiness float64 // gamma shape k (CV = 1/sqrt(k)); 1 = Poisson; ignored by the other kinds; 0 means 1
	Seed       uint64  // the same seed, kind and steps always give the same offsets
}

// Step is one segment of a step plan.
type Step struct {
	Rate     float64       // requests per second; 0 is a gap with no arrivals
	Duration time.Duration // length of the step; 0 on the last step means forever
}

// segment is a step with its position on both time axes.
type segment struct {
	rate     float64 // per second
	start    float64 // seconds from the stream start
	end      float64 // seconds; +Inf for a forever step
	lamStart float64 // Λ(start): expected arrivals before the step
	lamEnd   float64 // Λ(end)
}

// Sequence yields the planned offsets of one arrival stream. It is not safe
// for concurrent use; one stream owns one Sequence.
type Sequence struct {
	kind  Kind
	shape float64
	rng   *rand.Rand
	segs  []segment

	op  float64 // cumulative operational time (unit-rate axis) of the last arrival
	seg int     // segment of the last arrival (Λ is monotone, so it never goes back)
	k   int     // constant arrivals yielded in segment seg
	n   int     // arrivals yielded
}

// New validates spec and steps and returns the Sequence they define. At
// least one step is required; every step but the last needs a positive
// duration; rates must be finite and non-negative.
func New(spec Spec, steps ...Step) (*Sequence, error) {
	kind, err := ParseKind(string(spec.Kind))
	if err != nil {
		return nil, err
	}
	shape := 1.0
	if kind == Gamma {
		shape = spec.Burstiness
		if shape == 0 {
			shape = 1
		}
		if math.IsNaN(shape) || math.IsInf(shape, 0) || shape <= 0 {
			return nil, fmt.Errorf("schedule: gamma burstiness (shape) must be a finite number > 0, got %v", spec.Burstiness)
		}
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("schedule: no steps: give at least one rate")
	}
	segs := make([]segment, 0, len(steps))
	var t, lam float64
	for i, s := range steps {
		if math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0) || s.Rate < 0 {
			return nil, fmt.Errorf("schedule: step %d: rate must be a finite number ≥ 0 req/s, got %v", i+1, s.Rate)
		}
		if s.Duration < 0 {
			return nil, fmt.Errorf("schedule: step %d: duration must be ≥ 0, got %v", i+1, s.Duration)
		}
		last := i == len(steps)-1
		if s.Duration == 0 && !last {
			return nil, fmt.Errorf("schedule: step %d: duration 0 (forever) is only allowed on the last step", i+1)
		}
		end := math.Inf(1)
		lamEnd := math.Inf(1)
		if s.Duration > 0 {
			end = t + s.Duration.Seconds()
			lamEnd = lam + s.Rate*s.Duration.Seconds()
		} else if s.Rate == 0 {
			lamEnd = lam
		}
		segs = append(segs, segment{rate: s.Rate, start: t, end: end, lamStart: lam, lamEnd: lamEnd})
		t, lam = end, lamEnd
	}
	return &Sequence{
		kind:  kind,
		shape: shape,
		rng:   rand.New(rand.NewPCG(spec.Seed, 0x6c6c6d70726f6265)), // "llmprobe"
		segs:  segs,
	}, nil
}

// Next returns the next planned offset from the stream start and true, or
// false when the plan is exhausted (a finite plan has ended, or a forever
// last step has rate 0). Offsets never decrease.
//
// Constant arrivals sit half an interval into their slot: the j-th arrival
// (j = 0, 1, …) of a step at rate r starting at t0 is planned at
// t0 + (j + ½)/r, and each step starts its own grid. A step of rate r and
// duration W therefore plans exactly r·W arrivals when r·W is whole (the
// nearest whole number, halves rounded down, otherwise), no arrival ever
// falls on a step boundary, and every step of a ladder plans its exact
// count whatever the steps before it planned.
//
// Poisson and gamma arrivals are stationary renewal processes on the
// operational-time axis: the first gap is drawn from the process's
// equilibrium (forward-recurrence) distribution, so the expected number of
// arrivals in any interval is exactly Λ(end) − Λ(start), r·W for one step.
func (s *Sequence) Next() (time.Duration, bool) {
	if s.kind == Constant {
		return s.nextConstant()
	}
	if s.seg >= len(s.segs) {
		return 0, false
	}
	if s.n == 0 {
		s.op += s.firstGap()
	} else {
		s.op += s.gap()
	}
	for s.seg < len(s.segs) {
		g := s.segs[s.seg]
		if g.rate > 0 && s.op < g.lamEnd {
			sec := g.start + (s.op-g.lamStart)/g.rate
			if sec >= g.end { // rounding at the boundary: belongs to the next step
				s.seg++
				continue
			}
			s.n++
			return time.Duration(sec * 1e9), true
		}
		s.seg++
	}
	return 0, false
}

// nextConstant yields the next arrival of a constant plan: t0 + (k + ½)/r
// in the current step, computed from the index (no accumulated rounding).
func (s *Sequence) nextConstant() (time.Duration, bool) {
	for s.seg < len(s.segs) {
		g := s.segs[s.seg]
		if g.rate > 0 {
			sec := g.start + (float64(s.k)+0.5)/g.rate
			if sec < g.end {
				s.k++
				s.n++
				return time.Duration(sec * 1e9), true
			}
		}
		s.seg++
		s.k = 0
	}
	return 0, false
}

// Count is the number of offsets Next has returned so far.
func (s *Sequence) Count() int { return s.n }

// gap draws one unit-mean inter-arrival gap in operational time (Poisson
// or gamma).
func (s *Sequence) gap() float64 {
	if s.kind == Gamma && s.shape != 1 {
		return gammaVariate(s.rng, s.shape) / s.shape
	}
	return s.rng.ExpFloat64()
}

// firstGap draws the wait for the first arrival from the equilibrium
// distribution of the gaps, so the process is stationary from offset 0:
// U times a length-biased gap. A unit-mean gamma gap G/k (G ~ Gamma(k, 1))
// length-biased is Gamma(k+1, 1)/k. For Poisson (k = 1) that is an
// exponential gap again (memorylessness).
func (s *Sequence) firstGap() float64 {
	if s.kind == Gamma && s.shape != 1 {
		u := s.rng.Float64()
		return u * gammaVariate(s.rng, s.shape+1) / s.shape
	}
	return s.rng.ExpFloat64()
}

// StepAt returns the 0-based index of the step that contains offset (from
// the stream start), or -1 when offset is negative or past a finite plan.
func (s *Sequence) StepAt(offset time.Duration) int {
	return stepAt(s.segs, offset)
}

// Rate returns the scheduled rate (req/s) at offset, 0 outside the plan.
func (s *Sequence) Rate(offset time.Duration) float64 {
	if i := stepAt(s.segs, offset); i >= 0 {
		return s.segs[i].rate
	}
	return 0
}

// Expected returns Λ(offset): the expected number of arrivals planned before
// offset (the mean for Poisson and gamma; for constant arrivals the count
// differs from it by less than one).
func (s *Sequence) Expected(offset time.Duration) float64 {
	sec := offset.Seconds()
	if sec <= 0 {
		return 0
	}
	total := 0.0
	for _, g := range s.segs {
		if sec <= g.start {
			break
		}
		total = g.lamStart + g.rate*(math.Min(sec, g.end)-g.start)
	}
	return total
}

func stepAt(segs []segment, offset time.Duration) int {
	sec := offset.Seconds()
	if sec < 0 {
		return -1
	}
	for i, g := range segs {
		if sec < g.end {
			return i
		}
	}
	return -1
}

// gammaVariate draws from Gamma(shape, 1) by Marsaglia and Tsang's method
// (ACM TOMS 26(3), 2000), boosting shapes below one with U^(1/shape).
func gammaVariate(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := r.Float64()
		for u == 0 {
			u = r.Float64()
		}
		return gammaVariate(r, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x {
			return d * v
		}
		if u > 0 && math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
