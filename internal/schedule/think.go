package schedule

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// ThinkKind is a closed-loop think-time distribution.
type ThinkKind string

// Think-time distributions.
const (
	ThinkConstant    ThinkKind = "constant"    // always Mean
	ThinkExponential ThinkKind = "exponential" // exponential with mean Mean
	ThinkLognormal   ThinkKind = "lognormal"   // lognormal with mean Mean and log-space sigma Sigma
)

// ParseThinkKind returns the ThinkKind named s ("" means constant).
func ParseThinkKind(s string) (ThinkKind, error) {
	switch k := ThinkKind(strings.ToLower(strings.TrimSpace(s))); k {
	case "":
		return ThinkConstant, nil
	case ThinkConstant, ThinkExponential, ThinkLognormal:
		return k, nil
	default:
		return "", fmt.Errorf("schedule: unknown think-time distribution %q (want constant, exponential or lognormal)", s)
	}
}

// ThinkSpec describes a think-time distribution.
type ThinkSpec struct {
	Kind  ThinkKind     // "" means constant
	Mean  time.Duration // mean think time, ≥ 0
	Sigma float64       // lognormal only: standard deviation of the log, > 0
}

// Validate reports a clear error for an impossible spec.
func (t ThinkSpec) Validate() error {
	k, err := ParseThinkKind(string(t.Kind))
	if err != nil {
		return err
	}
	if t.Mean < 0 {
		return fmt.Errorf("schedule: think time mean must be ≥ 0, got %v", t.Mean)
	}
	if k == ThinkLognormal && (math.IsNaN(t.Sigma) || math.IsInf(t.Sigma, 0) || t.Sigma <= 0) {
		return fmt.Errorf("schedule: lognormal think time needs sigma > 0, got %v", t.Sigma)
	}
	return nil
}

// Think draws think times. It is not safe for concurrent use: give each
// closed-loop user its own, seeded apart (e.g. NewThink(spec, seed, user)).
type Think struct {
	kind ThinkKind
	mean float64 // seconds
	mu   float64 // lognormal location
	sig  float64
	rng  *rand.Rand
}

// NewThink validates spec and returns a seeded think-time source; stream
// separates the sources of users sharing one seed.
func NewThink(spec ThinkSpec, seed, stream uint64) (*Think, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	k, _ := ParseThinkKind(string(spec.Kind))
	t := &Think{kind: k, mean: spec.Mean.Seconds(), sig: spec.Sigma, rng: rand.New(rand.NewPCG(seed, stream^0x7468696e6b))}
	if k == ThinkLognormal && t.mean > 0 {
		// E[X] = exp(mu + sigma²/2) = mean.
		t.mu = math.Log(t.mean) - spec.Sigma*spec.Sigma/2
	}
	return t, nil
}

// Next draws one think time.
func (t *Think) Next() time.Duration {
	if t.mean == 0 {
		return 0
	}
	var sec float64
	switch t.kind {
	case ThinkExponential:
		sec = t.mean * t.rng.ExpFloat64()
	case ThinkLognormal:
		sec = math.Exp(t.mu + t.sig*t.rng.NormFloat64())
	default:
		sec = t.mean
	}
	return time.Duration(sec * 1e9)
}

// ParseThink parses a think time: a bare duration (constant), or
// "kind:mean[:sigma]" (constant:D, exponential:MEAN, lognormal:MEAN:SIGMA).
// The probe's --think-time and a session's think use it.
func ParseThink(s string) (ThinkSpec, error) {
	const want = "want a duration (constant), constant:D, exponential:MEAN or lognormal:MEAN:SIGMA"
	if !strings.Contains(s, ":") {
		mean, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return ThinkSpec{}, errors.New(want)
		}
		spec := ThinkSpec{Kind: ThinkConstant, Mean: mean}
		return spec, spec.Validate()
	}
	parts := strings.Split(s, ":")
	if len(parts) > 3 {
		return ThinkSpec{}, errors.New(want)
	}
	k, err := ParseThinkKind(parts[0])
	if err != nil {
		return ThinkSpec{}, err
	}
	mean, err := time.ParseDuration(parts[1])
	if err != nil {
		return ThinkSpec{}, fmt.Errorf("mean: %w", err)
	}
	spec := ThinkSpec{Kind: k, Mean: mean}
	if len(parts) == 3 {
		if spec.Sigma, err = strconv.ParseFloat(parts[2], 64); err != nil {
			return spec, fmt.Errorf("sigma: %w", err)
		}
	}
	return spec, spec.Validate()
}
