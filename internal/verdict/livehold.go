package verdict

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
)

// Flip is one change of the live verdict (LiveValidity): when, to what,
// and why: the causes of an invalid verdict, or the clean window that
// ended one.
type Flip struct {
	At     time.Time
	Valid  bool
	Causes []InvalidCause // turning invalid: the rule's causes; turning valid: none
	Why    string         // the figures in words
}

// maxFlips bounds the flips kept until taken (the oldest are dropped).
const maxFlips = 32

// liveHold is the live verdict's hysteresis.
type liveHold struct {
	held  bool     // the verdict published is invalid
	last  Validity // the last invalid verdict the rule reached
	flips []Flip   // not yet taken
}

func (h *liveHold) flip(f Flip) {
	if len(h.flips) == maxFlips {
		h.flips = append(h.flips[:0], h.flips[1:]...)
	}
	h.flips = append(h.flips, f)
}

// apply turns the rule's verdict raw over the window ending at now (its
// evidence e, judged by c with its defaults in force) into the published
// one: invalid as soon as raw is; once invalid, valid again only over a
// clean window (lagClean, and none unsent at the in-flight cap); until
// then, an invalid verdict naming the lag cause of the last invalid one
// and the window's figures.
func (h *liveHold) apply(now time.Time, window time.Duration, c ValidityConfig, e Evidence, raw Validity) Validity {
	c = c.withDefaults()
	switch {
	case !raw.Valid:
		if !h.held {
			h.flip(Flip{At: now, Causes: raw.Causes, Why: strings.Join(raw.Reasons(), "; ")})
		}
		h.held, h.last = true, raw
		return raw
	case !h.held:
		return raw
	case lagClean(e) && e.ClientCap == 0:
		h.held = false
		h.flip(Flip{At: now, Valid: true, Why: fmt.Sprintf("a clean %s window: %d of %d dispatches later than %s (at most 1 %%), none later than %s, none unsent at the in-flight cap",
			fmtDur(window), e.LagOver, e.LagCount, fmtDur(c.MaxLagP99), fmtDur(time.Duration(c.LagHardFactor*float64(c.MaxLagP99))))})
		return raw
	}
	late := cause.DispatchLag
	for _, x := range h.last.Causes {
		if x.Cause != cause.InFlightCap && x.Cause != cause.RateNotReached {
			late = x.Cause
			break
		}
	}
	p99 := fmtDur(e.LagP99)
	if e.LagP99Approx {
		p99 = "≈" + p99
	}
	why := fmt.Sprintf("held invalid until a clean %s window: %d of %d dispatches later than %s (%s, above 1 %%, though no longer significantly); p99 %s",
		fmtDur(window), e.LagOver, e.LagCount, fmtDur(c.MaxLagP99), fmtPct(float64(e.LagOver)/float64(max(e.LagCount, 1))), p99)
	return Validity{Valid: false, Host: raw.Host, Notes: raw.Notes,
		Causes: []InvalidCause{{Cause: late, Reason: why, Action: late.Action()}}}
}

// TakeFlips returns the verdict's flips since the last call, oldest first
// (at most the last 32), so that each is logged once whoever judged.
func (v *LiveValidity) TakeFlips() []Flip {
	v.mu.Lock()
	defer v.mu.Unlock()
	f := v.hold.flips
	v.hold.flips = nil
	return f
}
