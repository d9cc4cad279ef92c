package verdict

import (
	"fmt"
	"math"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/durfmt"
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
	// StarvedSchedP99 is the Go scheduler latency p99 from which a late
	// generator is blamed on a starved host (0: a quarter of MaxLagP99).
	StarvedSchedP99 time.Duration
	// StarvedSteal is the CPU steal fraction from which a late generator is
	// blamed on a starved host (0: 0.10).
	StarvedSteal float64
	// StarvedPressure is the CPU pressure ("some": the share of the window
	// in which a runnable task waited for a CPU, /proc/pressure/cpu or the
	// prober's cgroup v2 cpu.pressure) from which a late generator is
	// blamed on a starved host (0: 0.20).
	StarvedPressure float64
	// StarvedThrottled is the share of the prober cgroup's CPU periods
	// throttled by its quota from which a late generator is blamed on the
	// CPU limit (0: 0.05).
	StarvedThrottled float64
	// StarvedRunWait is the time the prober's threads waited runnable for a
	// CPU (schedstat, summed over threads) per second of the window from
	// which a late generator is blamed on a starved host (0: 0.10).
	StarvedRunWait float64
	// StarvedBusy is the host's non-idle CPU share (/proc/stat) from which
	// a late generator is blamed on a starved host (0: 0.95).
	StarvedBusy float64
	// LagConfidence is the confidence of the dispatch-lag test: the
	// generator is late when its dispatches later than MaxLagP99 are more
	// than 1 % of them with a one-sided binomial p-value below
	// 1 − LagConfidence (LagSignificant; 0: DefaultLagConfidence, 0.999).
	LagConfidence float64
	// LagHardFactor makes one dispatch later than LagHardFactor ×
	// MaxLagP99 invalidate on its own (HardLimit; 0: DefaultLagHardFactor,
	// 10).
	LagHardFactor float64
}

// DefaultValidity is used for every zero field of a ValidityConfig.
var DefaultValidity = ValidityConfig{MaxLagP99: 10 * time.Millisecond, RateTolerance: 0.10, Z: 3.29, MinExpected: 10, StarvedSteal: 0.10,
	StarvedPressure: 0.20, StarvedThrottled: 0.05, StarvedRunWait: 0.10, StarvedBusy: 0.95}

// InvalidCause is one reason a verdict is invalid: its cause, the reason
// in words (with the figures that decided it) and what to do.
type InvalidCause struct {
	Cause  cause.Cause `json:"cause"`
	Reason string      `json:"reason"`
	Action string      `json:"what_to_do"`
	// HostCaused marks a shard_invalid cause whose shard's own causes all
	// blame its host (HostCaused); false for every other cause.
	HostCaused bool `json:"host_caused,omitempty"`
}

// Validity is the generator-validity verdict: whether the load generator did
// what was asked, so that its measurements can be trusted. It judges the
// prober, never the target: a valid verdict says nothing about whether the
// target is healthy.
type Validity struct {
	Valid  bool
	Causes []InvalidCause // why it is invalid (empty when valid): each cause, its reason and what to do
	Notes  []string       // caveats that do not invalidate (closed loop, too few arrivals)
	Host   HostHealth     // the prober host's health over the same window
}

// Reasons are the causes' reasons in words, in order (nil when valid):
// Reasons()[i] is Causes[i].Reason. Derived, never stored, so the two
// cannot disagree.
func (v Validity) Reasons() []string {
	var out []string
	for _, c := range v.Causes {
		out = append(out, c.Reason)
	}
	return out
}

// CauseNames are the names of the causes (host_starved, dispatch_lag, …),
// in order, for a log line or a message.
func (v Validity) CauseNames() []string {
	var out []string
	for _, c := range v.Causes {
		out = append(out, string(c.Cause))
	}
	return out
}

// Has reports whether c is among the verdict's causes.
func (v Validity) Has(c cause.Cause) bool {
	for _, x := range v.Causes {
		if x.Cause == c {
			return true
		}
	}
	return false
}

// Evidence is what the validity rule judges: the one rule behind the
// probe's and each ladder step's verdict (Accumulator) and the daemon's
// live verdict (LiveValidity).
type Evidence struct {
	Mode ledger.Mode
	// LagCount counts dispatched attempts with a dispatch lag; LagOver those
	// whose lag exceeded the configured MaxLagP99 and LagOverHard those
	// beyond its HardLimit (counted against those same limits); LagP99 and
	// LagMax are for the reason's text.
	LagCount, LagOver, LagOverHard int
	LagP99, LagMax                 time.Duration
	LagP99Approx                   bool // LagP99 was read from a histogram
	// ClientCap counts attempts unsent by the in-flight cap, FirstClientCap
	// the first attempts among them.
	ClientCap, FirstClientCap int
	// RequestedRate and Window: the schedule's rate and the arrival window;
	// 0 when unknown (the rate is then not judged).
	RequestedRate float64
	Window        time.Duration
	// FirstDispatched and FirstUnsent split the first attempts planned.
	FirstDispatched, FirstUnsent int
	// Pending counts arrivals dispatched and still in flight (no record
	// yet: Summary.Pending): offered, so the rate counts them.
	Pending int
	Host    HostHealth
}

// positive sets *d to c when c is above 0: a zero (unset) or negative
// setting keeps the default in *d.
func positive[T ~int | ~int64 | ~float64](d *T, c T) {
	if c > 0 {
		*d = c
	}
}

func (c ValidityConfig) withDefaults() ValidityConfig {
	d := DefaultValidity
	positive(&d.MaxLagP99, c.MaxLagP99)
	d.lagDefaults(c)
	positive(&d.RateTolerance, c.RateTolerance)
	positive(&d.Z, c.Z)
	positive(&d.MinExpected, c.MinExpected)
	d.StarvedSchedP99 = d.MaxLagP99 / 4
	positive(&d.StarvedSchedP99, c.StarvedSchedP99)
	positive(&d.StarvedSteal, c.StarvedSteal)
	d.hostThresholds(c)
	return d
}

// Limit returns the dispatch-lag p99 limit in force (MaxLagP99 or its
// default).
func (c ValidityConfig) Limit() time.Duration { return c.withDefaults().MaxLagP99 }

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

// LagP99Exceeds reports whether the nearest-rank p99 of n lags exceeds a
// limit, given the number over it: the p99 is the ⌈0.99·n⌉-th smallest lag,
// so it exceeds the limit exactly when fewer than ⌈0.99·n⌉ lags are within
// it. The same rank as quantile.Dist.Quantile(0.99). It is not the verdict (a p99
// of 14 dispatches is their maximum: see LagSignificant); the live
// verdict's hysteresis reads it for a clean window.
func LagP99Exceeds(n, over int) bool {
	if n <= 0 {
		return false
	}
	rank := min(max(int(math.Ceil(0.99*float64(n))), 1), n)
	return n-over < rank
}

// Judge is the validity rule. The generator is invalid when significantly
// more than 1 % of its dispatches were later than MaxLagP99, or one was
// later than its HardLimit (lagEvidence; cause cgroup_throttled or
// host_starved when the host measurably lacked CPU over the same window,
// else dispatch_lag: see lateCause), when any arrival was unsent
// at the in-flight cap (in_flight_cap), or, open loop with a known rate and
// enough expected arrivals, when the first attempts dispatched leave the
// RateBounds band (rate_not_reached; arrivals unsent at the cap count as
// offered there, being the in_flight_cap cause already).
func (c ValidityConfig) Judge(e Evidence) Validity {
	c = c.withDefaults()
	v := Validity{Valid: true, Host: e.Host}
	fail := func(why cause.Cause, format string, a ...any) {
		v.Valid = false
		v.Causes = append(v.Causes, InvalidCause{Cause: why, Reason: fmt.Sprintf(format, a...), Action: why.Action()})
	}
	if lag := c.lagEvidence(e); lag != "" {
		late := c.lateCause(e.Host, lag)
		fail(late.Cause, "%s", late.Reason)
		v.Causes[len(v.Causes)-1].Action = late.Action
	}
	if e.ClientCap > 0 {
		fail(cause.InFlightCap, "in-flight cap full: %d arrival(s) unsent (client_cap): offered load was suppressed", e.ClientCap)
	}
	if e.Mode == ledger.ModeClosed {
		v.Notes = append(v.Notes, "closed loop: each user waits for its response before the next request (coordinated omission); latencies understate what open-loop arrivals would see, and the rate is not judged")
		return v
	}
	if e.RequestedRate <= 0 || e.Window <= 0 {
		v.Notes = append(v.Notes, "requested rate or window unknown: achieved rate not judged")
		return v
	}
	lambda := e.RequestedRate * e.Window.Seconds()
	if lambda < c.MinExpected {
		v.Notes = append(v.Notes, fmt.Sprintf("only %.1f arrivals expected (fewer than %.0f): achieved rate not judged", lambda, c.MinExpected))
		return v
	}
	// Arrivals the in-flight cap suppressed are already the in_flight_cap
	// cause: the rate is judged on what the generator offered or the cap
	// held back, so that this cause names only what the cap does not
	// explain (a budget, a rate cap, a shutdown, a generator that fell
	// behind).
	lo, hi := RateBounds(lambda, c.RateTolerance, c.Z)
	offered := e.FirstDispatched + e.Pending
	if n := float64(offered + e.FirstClientCap); n < lo || n > hi {
		capped, why := "", ""
		if e.Pending > 0 {
			capped = fmt.Sprintf(", %d of them still in flight", e.Pending)
		}
		if e.FirstClientCap > 0 {
			capped += fmt.Sprintf(" + %d unsent at the in-flight cap", e.FirstClientCap)
		}
		if withheld := e.FirstUnsent - e.FirstClientCap; withheld > 0 {
			why = fmt.Sprintf("; %d arrival(s) were withheld unsent by budget, rate cap or shutdown", withheld)
		}
		fail(cause.RateNotReached, "achieved rate %s req/s is outside requested %s req/s ±%.0f%% (%d dispatched%s, %.0f–%.0f accepted for %.1f expected allowing for Poisson noise%s)",
			durfmt.Rate(float64(offered)/e.Window.Seconds()), durfmt.Rate(e.RequestedRate), c.RateTolerance*100, offered, capped, math.Max(lo, 0), hi, lambda, why)
	}
	return v
}

// fmtDur formats a duration to three significant figures (durfmt.Format).
func fmtDur(d time.Duration) string { return durfmt.Format(d) }
