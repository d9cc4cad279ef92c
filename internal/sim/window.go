package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Window is a scheduled period in which service slows by Factor or, with
// Stall, stops entirely. It starts Start after the server starts, or at the
// absolute time At when At is set.
type Window struct {
	Start    time.Duration `koanf:"start" json:"start,omitempty" yaml:"start,omitempty"`
	At       time.Time     `koanf:"at" json:"at,omitzero" yaml:"at,omitempty"`
	Duration time.Duration `koanf:"duration" json:"duration" yaml:"duration"`
	Factor   float64       `koanf:"factor" json:"factor,omitempty" yaml:"factor,omitempty"` // > 1 slows service (work takes Factor times longer)
	Stall    bool          `koanf:"stall" json:"stall,omitempty" yaml:"stall,omitempty"`    // no service progress at all
}

// Validate reports a window that cannot be applied.
func (w Window) Validate() error {
	if w.Duration <= 0 {
		return fmt.Errorf("window %s: duration must be > 0", w)
	}
	if w.Start < 0 {
		return fmt.Errorf("window %s: start offset must be >= 0", w)
	}
	if !w.Stall && (!(w.Factor > 0) || math.IsInf(w.Factor, 0)) {
		return fmt.Errorf("window %s: slowdown factor must be a finite number > 0", w)
	}
	return nil
}

// String renders the window in the flag syntax ParseStall/ParseSlowdown read.
func (w Window) String() string {
	var b strings.Builder
	if !w.At.IsZero() {
		b.WriteString(w.At.Format(time.RFC3339Nano))
	} else {
		b.WriteString(w.Start.String())
	}
	b.WriteByte('+')
	b.WriteString(w.Duration.String())
	if !w.Stall {
		b.WriteByte('*')
		b.WriteString(strconv.FormatFloat(w.Factor, 'g', -1, 64))
	}
	return b.String()
}

// ParseStall parses a stall window "START+DURATION", where START is an offset
// from server start ("10s") or an RFC 3339 time ("2026-11-29T19:00:00Z"):
// e.g. "10s+5s".
func ParseStall(s string) (Window, error) {
	w, rest, err := parseSpan(s)
	if err != nil {
		return Window{}, fmt.Errorf("stall %q: %w", s, err)
	}
	if rest != "" {
		return Window{}, fmt.Errorf("stall %q: want START+DURATION", s)
	}
	w.Stall = true
	if err := w.Validate(); err != nil {
		return Window{}, fmt.Errorf("stall %q: %w", s, err)
	}
	return w, nil
}

// ParseSlowdown parses a slowdown window "START+DURATION*FACTOR", e.g.
// "20s+10s*4" (from 20 s after start, for 10 s, service takes 4 times longer).
func ParseSlowdown(s string) (Window, error) {
	w, rest, err := parseSpan(s)
	if err != nil {
		return Window{}, fmt.Errorf("slowdown %q: %w", s, err)
	}
	if rest == "" {
		return Window{}, fmt.Errorf("slowdown %q: want START+DURATION*FACTOR", s)
	}
	f, err := strconv.ParseFloat(rest, 64)
	if err != nil {
		return Window{}, fmt.Errorf("slowdown %q: factor: %w", s, err)
	}
	w.Factor = f
	if err := w.Validate(); err != nil {
		return Window{}, fmt.Errorf("slowdown %q: %w", s, err)
	}
	return w, nil
}

// parseSpan reads "START+DURATION[*REST]" and returns REST.
func parseSpan(s string) (Window, string, error) {
	var w Window
	s = strings.TrimSpace(s)
	i := strings.LastIndexByte(s, '+')
	if i <= 0 {
		return w, "", errors.New("want START+DURATION")
	}
	start, span := s[:i], s[i+1:]
	span, rest, _ := strings.Cut(span, "*")
	if off, err := time.ParseDuration(start); err == nil {
		w.Start = off
	} else if at, err2 := time.Parse(time.RFC3339Nano, start); err2 == nil {
		w.At = at
	} else {
		return w, "", fmt.Errorf("start %q is neither a duration nor an RFC 3339 time", start)
	}
	d, err := time.ParseDuration(span)
	if err != nil {
		return w, "", fmt.Errorf("duration: %w", err)
	}
	w.Duration = d
	return w, strings.TrimSpace(rest), nil
}

// segment is a piece of the service timeline [from, to) in which work
// progresses at rate (1 = normal, 0 = stalled).
type segment struct {
	from, to time.Duration
	rate     float64
}

// timeline maps service work onto server-time offsets through the windows.
type timeline struct{ segs []segment }

// newTimeline resolves windows against the server start (wall clock) into
// disjoint segments; overlapping windows take the slowest rate.
func newTimeline(ws []Window, start time.Time) timeline {
	type span struct {
		from, to time.Duration
		rate     float64
	}
	var spans []span
	var cuts []time.Duration
	for _, w := range ws {
		from := w.Start
		if !w.At.IsZero() {
			from = w.At.Sub(start)
		}
		to := from + w.Duration
		if to <= 0 {
			continue
		}
		from = max(from, 0)
		rate := 0.0
		if !w.Stall {
			rate = 1 / w.Factor
		}
		spans = append(spans, span{from, to, rate})
		cuts = append(cuts, from, to)
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var tl timeline
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		rate, covered := math.Inf(1), false
		for _, s := range spans {
			if s.from <= a && b <= s.to {
				rate, covered = min(rate, s.rate), true
			}
		}
		if !covered {
			continue
		}
		if n := len(tl.segs); n > 0 && tl.segs[n-1].to == a && tl.segs[n-1].rate == rate {
			tl.segs[n-1].to = b
			continue
		}
		tl.segs = append(tl.segs, segment{a, b, rate})
	}
	return tl
}

// advance returns the offset at which work (service time at normal speed)
// begun at offset t is done.
func (tl timeline) advance(t, work time.Duration) time.Duration {
	if len(tl.segs) == 0 || t >= tl.segs[len(tl.segs)-1].to {
		return t + work
	}
	for _, s := range tl.segs {
		if t >= s.to {
			continue
		}
		if t < s.from { // normal speed until the window
			if t+work <= s.from {
				return t + work
			}
			work -= s.from - t
			t = s.from
		}
		if s.rate > 0 {
			need := time.Duration(float64(work) / s.rate)
			if t+need <= s.to {
				return t + need
			}
			work -= time.Duration(float64(s.to-t) * s.rate)
		}
		t = s.to
		if work <= 0 {
			return t
		}
	}
	return t + work
}

// rateAt is the service rate at offset t (1 normal, 0 stalled).
func (tl timeline) rateAt(t time.Duration) float64 {
	for _, s := range tl.segs {
		if s.from <= t && t < s.to {
			return s.rate
		}
	}
	return 1
}
