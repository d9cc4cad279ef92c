package stats

import (
	"fmt"
	"math"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// ValidityConfig tunes the generator-validity verdict. Zero fields take the
// values of DefaultValidity.
type ValidityConfig struct {
	// MaxLagP99 is the largest acceptable dispatch-lag p99.
	MaxLagP99 time.Duration
	// RateTolerance is the accepted relative deviation of the achieved rate
	// from the requested rate (0.10 = ±10%).
	RateTolerance float64
	// Z is the normal quantile added around the tolerance band to allow for
	// Poisson noise in the arrival count (3.29 ≈ two-sided 99.9%).
	Z float64
	// MinExpected is the smallest expected arrival count at which the rate
	// is judged at all; below it the verdict only notes it.
	MinExpected float64
}

// DefaultValidity is used for every zero field of a ValidityConfig.
var DefaultValidity = ValidityConfig{MaxLagP99: 10 * time.Millisecond, RateTolerance: 0.10, Z: 3.29, MinExpected: 10}

// Validity is the generator-validity verdict: whether the load generator did
// what was asked, so that its measurements can be trusted.
type Validity struct {
	Valid   bool
	Reasons []string // why it is invalid (empty when valid)
	Notes   []string // caveats that do not invalidate (closed loop, too few arrivals)
}

func (c ValidityConfig) withDefaults() ValidityConfig {
	d := DefaultValidity
	if c.MaxLagP99 > 0 {
		d.MaxLagP99 = c.MaxLagP99
	}
	if c.RateTolerance > 0 {
		d.RateTolerance = c.RateTolerance
	}
	if c.Z > 0 {
		d.Z = c.Z
	}
	if c.MinExpected > 0 {
		d.MinExpected = c.MinExpected
	}
	return d
}

// RateBounds returns the range of dispatched counts accepted for an expected
// count lambda: lambda·(1−tol) − z·√(lambda·(1−tol)) to
// lambda·(1+tol) + z·√(lambda·(1+tol)). The tolerance band is widened by z
// standard deviations of a Poisson count, so a short run is not flagged for
// the noise of its own arrival process, while a long one is held close to
// the tolerance.
func RateBounds(lambda, tol, z float64) (lo, hi float64) {
	l, h := lambda*(1-tol), lambda*(1+tol)
	return l - z*math.Sqrt(l), h + z*math.Sqrt(h)
}

// judge gives the verdict; clientCap counts attempts unsent by the cap,
// firstClientCap the first attempts among them. The rate is judged on first
// attempts dispatched (offered load): retries are not arrivals.
func judge(cfg ValidityConfig, s *Summary, clientCap, firstClientCap int) Validity {
	c := cfg.withDefaults()
	v := Validity{Valid: true}
	fail := func(format string, a ...any) {
		v.Valid = false
		v.Reasons = append(v.Reasons, fmt.Sprintf(format, a...))
	}
	if s.DispatchLag.Count > 0 && s.DispatchLag.P99 > c.MaxLagP99 {
		fail("dispatch-lag p99 %s exceeds %s: the generator did not keep its schedule", s.DispatchLag.P99, c.MaxLagP99)
	}
	if clientCap > 0 {
		fail("%d arrival(s) unsent because the in-flight cap was full (client_cap): offered load was suppressed", clientCap)
	}
	if s.Mode == ledger.ModeClosed {
		v.Notes = append(v.Notes, "closed loop: each user waits for its response before the next request (coordinated omission); latencies understate what open-loop arrivals would see, and the rate is not judged")
		return v
	}
	if s.RequestedRate <= 0 || s.Window <= 0 {
		v.Notes = append(v.Notes, "requested rate or window unknown: achieved rate not judged")
		return v
	}
	lambda := s.RequestedRate * s.Window.Seconds()
	if lambda < c.MinExpected {
		v.Notes = append(v.Notes, fmt.Sprintf("only %.1f arrivals expected (fewer than %.0f): achieved rate not judged", lambda, c.MinExpected))
		return v
	}
	lo, hi := RateBounds(lambda, c.RateTolerance, c.Z)
	if n := float64(s.FirstDispatched); n < lo || n > hi {
		why := ""
		if withheld := s.FirstUnsent - firstClientCap; withheld > 0 {
			why = fmt.Sprintf("; %d arrival(s) were withheld unsent by budget, rate cap or shutdown", withheld)
		}
		fail("achieved rate %.3g req/s is outside requested %.3g req/s ±%.0f%% (%d dispatched, %.0f–%.0f accepted for %.1f expected allowing for Poisson noise%s)",
			s.AchievedRate, s.RequestedRate, c.RateTolerance*100, s.FirstDispatched, math.Max(lo, 0), hi, lambda, why)
	}
	return v
}
