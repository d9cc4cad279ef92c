package workload

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

// LengthDist draws a length in tokens, always ≥ 1.
type LengthDist interface {
	Sample(r *rand.Rand) int
	// String describes the distribution (for reports and /config).
	String() string
}

// Fixed always returns N.
type Fixed struct{ N int }

// Uniform draws uniformly from the integers in [Min, Max].
type Uniform struct{ Min, Max int }

// Normal draws round(N(Mean, SD)), truncated at 1: draws below 1 are
// redrawn (up to 64 times, then 1).
type Normal struct{ Mean, SD float64 }

// LogNormal draws round(exp(Mu + Sigma·N(0,1))), at least 1. Its median is
// exp(Mu) and its mean exp(Mu + Sigma²/2).
type LogNormal struct{ Mu, Sigma float64 }

// Empirical resamples uniformly from observed lengths.
type Empirical struct {
	Source string // the file it was read from (for String)
	values []int
}

// NewFixed validates a fixed length.
func NewFixed(n int) (Fixed, error) {
	if n < 1 {
		return Fixed{}, fmt.Errorf("fixed length %d must be ≥ 1", n)
	}
	return Fixed{n}, nil
}

// NewUniform validates a uniform range.
func NewUniform(lo, hi int) (Uniform, error) {
	switch {
	case lo < 1:
		return Uniform{}, fmt.Errorf("uniform min %d must be ≥ 1", lo)
	case lo > hi:
		return Uniform{}, fmt.Errorf("uniform min %d is greater than max %d", lo, hi)
	}
	return Uniform{lo, hi}, nil
}

// NewNormal validates a normal distribution.
func NewNormal(mean, sd float64) (Normal, error) {
	switch {
	case !finite(mean) || !finite(sd):
		return Normal{}, fmt.Errorf("normal mean %v and stddev %v must be finite", mean, sd)
	case sd < 0:
		return Normal{}, fmt.Errorf("normal stddev %v must be ≥ 0", sd)
	case mean < 1:
		return Normal{}, fmt.Errorf("normal mean %v must be ≥ 1", mean)
	}
	return Normal{mean, sd}, nil
}

// NewLogNormalMedian returns the lognormal with the given median and sigma
// (the standard deviation of the log).
func NewLogNormalMedian(median, sigma float64) (LogNormal, error) {
	if err := checkLogNormal("median", median, sigma); err != nil {
		return LogNormal{}, err
	}
	return LogNormal{math.Log(median), sigma}, nil
}

// NewLogNormalMean returns the lognormal with the given mean and sigma.
func NewLogNormalMean(mean, sigma float64) (LogNormal, error) {
	if err := checkLogNormal("mean", mean, sigma); err != nil {
		return LogNormal{}, err
	}
	return LogNormal{math.Log(mean) - sigma*sigma/2, sigma}, nil
}

func checkLogNormal(what string, v, sigma float64) error {
	switch {
	case !finite(v) || !finite(sigma):
		return fmt.Errorf("lognormal %s %v and sigma %v must be finite", what, v, sigma)
	case v < 1:
		return fmt.Errorf("lognormal %s %v must be ≥ 1", what, v)
	case sigma < 0:
		return fmt.Errorf("lognormal sigma %v must be ≥ 0", sigma)
	case sigma > 5:
		return fmt.Errorf("lognormal sigma %v is implausibly large (> 5)", sigma)
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Sample implements LengthDist.
func (f Fixed) Sample(*rand.Rand) int { return f.N }

// Sample implements LengthDist.
func (u Uniform) Sample(r *rand.Rand) int { return u.Min + r.IntN(u.Max-u.Min+1) }

// Sample implements LengthDist.
func (n Normal) Sample(r *rand.Rand) int {
	for range 64 {
		if v := int(math.Round(n.Mean + n.SD*r.NormFloat64())); v >= 1 {
			return v
		}
	}
	return 1
}

// Sample implements LengthDist.
func (l LogNormal) Sample(r *rand.Rand) int {
	v := math.Round(math.Exp(l.Mu + l.Sigma*r.NormFloat64()))
	if v < 1 {
		return 1
	}
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(v)
}

// Sample implements LengthDist.
func (e *Empirical) Sample(r *rand.Rand) int { return e.values[r.IntN(len(e.values))] }

// Len returns how many observed lengths it holds.
func (e *Empirical) Len() int { return len(e.values) }

func (f Fixed) String() string   { return fmt.Sprintf("fixed(%d)", f.N) }
func (u Uniform) String() string { return fmt.Sprintf("uniform(%d,%d)", u.Min, u.Max) }
func (n Normal) String() string  { return fmt.Sprintf("normal(mean=%g,sd=%g)", n.Mean, n.SD) }
func (l LogNormal) String() string {
	return fmt.Sprintf("lognormal(median=%.4g,sigma=%g)", math.Exp(l.Mu), l.Sigma)
}
func (e *Empirical) String() string {
	return fmt.Sprintf("empirical(%s, %d values)", e.Source, len(e.values))
}

// LoadEmpirical reads observed lengths from path: one positive integer per
// line; blank lines and lines starting with # are skipped.
func LoadEmpirical(path string) (*Empirical, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("empirical lengths: %w", err)
	}
	defer f.Close()
	return ParseEmpirical(f, path)
}

// ParseEmpirical reads observed lengths from r; name is used in errors
// ("name:line: …").
func ParseEmpirical(r io.Reader, name string) (*Empirical, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	e := &Empirical{Source: name}
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: not an integer length", name, line)
		}
		if v < 1 {
			return nil, fmt.Errorf("%s:%d: length %d must be ≥ 1", name, line, v)
		}
		e.values = append(e.values, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, scanErr(err))
	}
	if len(e.values) == 0 {
		return nil, fmt.Errorf("%s: no lengths (empty file)", name)
	}
	return e, nil
}

// maxLine bounds one line of any input file.
const maxLine = 1 << 20

func scanErr(err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("line longer than %d bytes", maxLine)
	}
	return err
}

// DistSpec is a length distribution as configuration describes it: the
// configuration's classes[].input and output are one (config.Class), read
// and checked by Build. Dist chooses the kind; only that kind's fields are
// read.
//
//	fixed:      Value
//	uniform:    Min, Max
//	normal:     Mean, Stddev
//	lognormal:  Median or Mean (exactly one), Sigma
//	empirical:  File
type DistSpec struct {
	Dist   string  `koanf:"dist" json:"dist"`
	Value  int     `koanf:"value" json:"value,omitempty"`
	Min    int     `koanf:"min" json:"min,omitempty"`
	Max    int     `koanf:"max" json:"max,omitempty"`
	Mean   float64 `koanf:"mean" json:"mean,omitempty"`
	Stddev float64 `koanf:"stddev" json:"stddev,omitempty"`
	Median float64 `koanf:"median" json:"median,omitempty"`
	Sigma  float64 `koanf:"sigma" json:"sigma,omitempty"`
	File   string  `koanf:"file" json:"file,omitempty"`
}

// Build validates the spec and returns its distribution. key names the spec
// in configuration (e.g. "classes[0].input") and prefixes every error.
func (s DistSpec) Build(key string) (LengthDist, error) {
	wrap := func(err error) (LengthDist, error) { return nil, fmt.Errorf("%s: %w", key, err) }
	var (
		d   LengthDist
		err error
	)
	switch strings.ToLower(s.Dist) {
	case "fixed":
		d, err = NewFixed(s.Value)
	case "uniform":
		d, err = NewUniform(s.Min, s.Max)
	case "normal":
		d, err = NewNormal(s.Mean, s.Stddev)
	case "lognormal":
		switch {
		case s.Median != 0 && s.Mean != 0:
			return wrap(errors.New("lognormal takes median or mean, not both"))
		case s.Median != 0:
			d, err = NewLogNormalMedian(s.Median, s.Sigma)
		case s.Mean == 0:
			return wrap(errors.New("lognormal needs median or mean"))
		default:
			d, err = NewLogNormalMean(s.Mean, s.Sigma)
		}
	case "empirical":
		if s.File == "" {
			return wrap(errors.New("empirical needs file"))
		}
		d, err = LoadEmpirical(s.File)
	case "":
		return wrap(errors.New("dist is required (fixed, uniform, normal, lognormal or empirical)"))
	default:
		return wrap(fmt.Errorf("unknown dist %q (want fixed, uniform, normal, lognormal or empirical)", s.Dist))
	}
	if err != nil {
		return wrap(err)
	}
	return d, nil
}
