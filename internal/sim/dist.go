package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// DistKind names a distribution family.
type DistKind string

// The distribution families a Dist can draw from.
const (
	Fixed       DistKind = "fixed"       // always Value
	Uniform     DistKind = "uniform"     // uniform on [Min, Max]
	Exponential DistKind = "exponential" // exponential with mean Value
	Lognormal   DistKind = "lognormal"   // lognormal with median Value and shape Sigma
)

// Dist is a seeded random distribution of a non-negative quantity. Durations
// are in seconds, lengths in tokens. The zero Dist is fixed at 0.
type Dist struct {
	Kind  DistKind `koanf:"kind" json:"kind" yaml:"kind"`
	Value float64  `koanf:"value" json:"value,omitempty" yaml:"value,omitempty"` // fixed: the value; exponential: the mean; lognormal: the median
	Min   float64  `koanf:"min" json:"min,omitempty" yaml:"min,omitempty"`       // uniform: lower bound
	Max   float64  `koanf:"max" json:"max,omitempty" yaml:"max,omitempty"`       // uniform: upper bound
	Sigma float64  `koanf:"sigma" json:"sigma,omitempty" yaml:"sigma,omitempty"` // lognormal: standard deviation of the log
}

// FixedDist returns a distribution that is always v.
func FixedDist(v float64) Dist { return Dist{Kind: Fixed, Value: v} }

// UniformDist returns a uniform distribution on [lo, hi].
func UniformDist(lo, hi float64) Dist { return Dist{Kind: Uniform, Min: lo, Max: hi} }

// ExponentialDist returns an exponential distribution with the given mean.
func ExponentialDist(mean float64) Dist { return Dist{Kind: Exponential, Value: mean} }

// LognormalDist returns a lognormal distribution with the given median and
// log-standard-deviation sigma.
func LognormalDist(median, sigma float64) Dist {
	return Dist{Kind: Lognormal, Value: median, Sigma: sigma}
}

// Validate reports impossible parameters.
func (d Dist) Validate() error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }
	switch d.Kind {
	case "", Fixed:
		if bad(d.Value) {
			return fmt.Errorf("fixed distribution: value %v must be a finite number >= 0", d.Value)
		}
	case Uniform:
		if bad(d.Min) || bad(d.Max) || d.Min > d.Max {
			return fmt.Errorf("uniform distribution: need 0 <= min (%v) <= max (%v)", d.Min, d.Max)
		}
	case Exponential:
		if bad(d.Value) || d.Value == 0 {
			return fmt.Errorf("exponential distribution: mean %v must be > 0", d.Value)
		}
	case Lognormal:
		if bad(d.Value) || d.Value == 0 {
			return fmt.Errorf("lognormal distribution: median %v must be > 0", d.Value)
		}
		if bad(d.Sigma) {
			return fmt.Errorf("lognormal distribution: sigma %v must be >= 0", d.Sigma)
		}
	default:
		return fmt.Errorf("unknown distribution kind %q (want fixed, uniform, exponential or lognormal)", d.Kind)
	}
	return nil
}

// Mean is the distribution's expected value.
func (d Dist) Mean() float64 {
	switch d.Kind {
	case Uniform:
		return (d.Min + d.Max) / 2
	case Lognormal:
		return d.Value * math.Exp(d.Sigma*d.Sigma/2)
	default:
		return d.Value
	}
}

// Sample draws one value from r.
func (d Dist) Sample(r *rand.Rand) float64 {
	switch d.Kind {
	case Uniform:
		return d.Min + (d.Max-d.Min)*r.Float64()
	case Exponential:
		return d.Value * r.ExpFloat64()
	case Lognormal:
		return d.Value * math.Exp(d.Sigma*r.NormFloat64())
	default:
		return d.Value
	}
}

// sampleDuration draws a duration from a Dist in seconds.
func (d Dist) sampleDuration(r *rand.Rand) time.Duration {
	if d.Kind == "" || d.Kind == Fixed {
		return time.Duration(d.Value * float64(time.Second))
	}
	return time.Duration(d.Sample(r) * float64(time.Second))
}

// sampleCount draws a token count, rounded to the nearest integer and at least lo.
func (d Dist) sampleCount(r *rand.Rand, lo int) int {
	n := int(math.Round(d.Sample(r)))
	return max(n, lo)
}

// ParseDurationDist parses a duration distribution from a flag value:
//
//	50ms                              fixed
//	fixed:50ms
//	uniform:20ms-80ms
//	exponential:50ms  (or exp:50ms)   mean
//	lognormal:50ms,0.5 (or lognormal:median=50ms,sigma=0.5)
func ParseDurationDist(s string) (Dist, error) {
	d, err := parseDist(s, func(v string) (float64, error) {
		dur, err := time.ParseDuration(v)
		if err != nil {
			return 0, err
		}
		return dur.Seconds(), nil
	})
	if err != nil {
		return Dist{}, fmt.Errorf("duration distribution %q: %w", s, err)
	}
	return d, nil
}

// ParseCountDist parses a token-count distribution from a flag value, in the
// same forms as ParseDurationDist with plain numbers: 64, uniform:32-96,
// exp:64, lognormal:56,0.5.
func ParseCountDist(s string) (Dist, error) {
	d, err := parseDist(s, func(v string) (float64, error) { return strconv.ParseFloat(v, 64) })
	if err != nil {
		return Dist{}, fmt.Errorf("count distribution %q: %w", s, err)
	}
	return d, nil
}

func parseDist(s string, num func(string) (float64, error)) (Dist, error) {
	s = strings.TrimSpace(s)
	kind, args, found := strings.Cut(s, ":")
	if !found {
		kind, args = string(Fixed), s
	}
	kind = strings.ToLower(strings.TrimSpace(kind))
	var d Dist
	switch kind {
	case "fixed":
		v, err := num(strings.TrimSpace(args))
		if err != nil {
			return d, err
		}
		d = FixedDist(v)
	case "uniform":
		lo, hi, ok := strings.Cut(args, "-")
		if !ok {
			return d, errors.New("uniform needs MIN-MAX")
		}
		a, err := num(strings.TrimSpace(lo))
		if err != nil {
			return d, err
		}
		b, err := num(strings.TrimSpace(hi))
		if err != nil {
			return d, err
		}
		d = UniformDist(a, b)
	case "exp", "exponential":
		v, err := num(strings.TrimPrefix(strings.TrimSpace(args), "mean="))
		if err != nil {
			return d, err
		}
		d = ExponentialDist(v)
	case "lognormal", "lognorm":
		med, sig, ok := strings.Cut(args, ",")
		if !ok {
			return d, errors.New("lognormal needs MEDIAN,SIGMA")
		}
		m, err := num(strings.TrimPrefix(strings.TrimSpace(med), "median="))
		if err != nil {
			return d, err
		}
		sg, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(sig), "sigma="), 64)
		if err != nil {
			return d, err
		}
		d = LognormalDist(m, sg)
	default:
		return d, fmt.Errorf("unknown distribution kind %q (want fixed, uniform, exp or lognormal)", kind)
	}
	return d, d.Validate()
}
