package verdict

import (
	"fmt"
	"time"
)

// Defaults of the dispatch-lag rule's ValidityConfig fields.
const (
	// DefaultLagConfidence is the confidence at which late dispatches must
	// be significantly more than 1 % (α = 0.001).
	DefaultLagConfidence = 0.999
	// DefaultLagHardFactor is the multiple of MaxLagP99 beyond which one
	// dispatch invalidates on its own.
	DefaultLagHardFactor = 10.0
)

// lagDefaults fills the lag rule's zero fields of d from c.
func (d *ValidityConfig) lagDefaults(c ValidityConfig) {
	d.LagConfidence, d.LagHardFactor = DefaultLagConfidence, DefaultLagHardFactor
	if c.LagConfidence > 0 && c.LagConfidence < 1 {
		d.LagConfidence = c.LagConfidence
	}
	if c.LagHardFactor >= 1 {
		d.LagHardFactor = c.LagHardFactor
	}
}

// HardLimit returns the dispatch lag beyond which one dispatch invalidates
// the generator on its own: LagHardFactor × MaxLagP99 (defaults in force).
func (c ValidityConfig) HardLimit() time.Duration {
	d := c.withDefaults()
	return time.Duration(d.LagHardFactor * float64(d.MaxLagP99))
}

// Confidence returns the lag test's confidence in force (LagConfidence or
// its default).
func (c ValidityConfig) Confidence() float64 { return c.withDefaults().LagConfidence }

// lagEvidence applies the dispatch-lag rule to e (c with its defaults):
// it returns "" when the lag does not invalidate the generator, else the
// figures that decided it, in words. The generator is late when the k of
// n dispatches later than MaxLagP99 are significantly more than 1 % of n
// (LagSignificant at LagConfidence), or when any dispatch was later than
// the hard limit (HardLimit).
func (c ValidityConfig) lagEvidence(e Evidence) string {
	n, k := e.LagCount, e.LagOver
	p99 := fmtDur(e.LagP99)
	if e.LagP99Approx {
		p99 = "≈" + p99
	}
	conf := fmt.Sprintf("%.4g %%", 100*c.LagConfidence)
	sig, pv := LagSignificant(n, k, c.LagConfidence)
	switch {
	case sig:
		p := fmt.Sprintf("P = %.2g", pv)
		if pv < 1e-12 {
			p = "P < 1e-12"
		}
		return fmt.Sprintf("dispatch lag: %d of %d dispatches later than %s (%s, significantly above 1 %% at %s confidence: %s); p99 %s",
			k, n, fmtDur(c.MaxLagP99), fmtPct(float64(k)/float64(n)), conf, p, p99)
	case e.LagOverHard > 0:
		hard := time.Duration(c.LagHardFactor * float64(c.MaxLagP99))
		most := ""
		if e.LagMax > 0 {
			most = ", the latest " + fmtDur(e.LagMax)
		}
		return fmt.Sprintf("dispatch lag: %d of %d dispatches later than %s (%g × the %s limit%s: one that late invalidates on its own); p99 %s",
			e.LagOverHard, n, fmtDur(hard), c.LagHardFactor, fmtDur(c.MaxLagP99), most, p99)
	}
	return ""
}

// lagClean reports whether e shows no dispatch-lag trouble at all: no
// dispatch beyond the hard limit and no more than 1 % of dispatches later
// than the limit (the nearest-rank p99 within it). The live verdict turns
// valid again only over a clean window.
func lagClean(e Evidence) bool {
	return e.LagOverHard == 0 && !LagP99Exceeds(e.LagCount, e.LagOver)
}

// fmtPct formats a fraction as a percentage: "4.0 %".
func fmtPct(f float64) string {
	return fmt.Sprintf("%.1f %%", 100*f)
}
