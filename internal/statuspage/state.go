package statuspage

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/slo"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// The target's state, first on its status card and logged on every
// change: computed from the availability and latency SLIs as the shipped
// rules count them (internal/slo), over the first page tier's windows.

// availCounts are one window's availability events (slo.Availability):
// sent outside ladders, failed among them, and the same during ladders.
type availCounts struct {
	Sent, Failed             int
	DuringSent, DuringFailed int
	// Among Failed: Answered got an HTTP status (the target answered),
	// Refused was refused as the prober's (401/403, or 404: a model or
	// path it does not serve).
	Answered, Refused int
	// Unsent are baseline arrivals the prober held back (any window
	// label): by its budget, by its in-flight or rate cap.
	UnsentBudget, UnsentCap int
}

func (c *availCounts) add(o availCounts) {
	c.Sent, c.Failed = c.Sent+o.Sent, c.Failed+o.Failed
	c.DuringSent, c.DuringFailed = c.DuringSent+o.DuringSent, c.DuringFailed+o.DuringFailed
	c.Answered, c.Refused = c.Answered+o.Answered, c.Refused+o.Refused
	c.UnsentBudget, c.UnsentCap = c.UnsentBudget+o.UnsentBudget, c.UnsentCap+o.UnsentCap
}

// refusal reports whether a failure is the target refusing the prober.
func refusal(rec *ledger.Record) bool {
	return rec.Outcome == ledger.HTTPError && (rec.Reason == ledger.ReasonUnauthorized || rec.Reason == ledger.ReasonNotFound)
}

// availRing counts availability events in one-minute slots over
// statusSpan, per class (the rules judge each class). Bounded: at most
// maxStatusClasses classes × 60 slots.
type availRing struct {
	mu      sync.Mutex
	classes map[string]*[60]availSlot
}

// availSlot is one minute of a class: 40 bytes (its counts are 32-bit:
// a minute at limits.max_rate's 10,000 req/s is 600,000), so a class's
// hour is 2.4 KB, not 4.3 KB (docs/scale.md).
type availSlot struct {
	minute                   int64
	sent, failed             int32
	duringSent, duringFailed int32
	answered, refused        int32
	unsentBudget, unsentCap  int32
}

func (s *availSlot) counts() availCounts {
	return availCounts{Sent: int(s.sent), Failed: int(s.failed), DuringSent: int(s.duringSent), DuringFailed: int(s.duringFailed),
		Answered: int(s.answered), Refused: int(s.refused), UnsentBudget: int(s.unsentBudget), UnsentCap: int(s.unsentCap)}
}

// record counts rec at now: baseline traffic only, events only.
func (a *availRing) record(now time.Time, rec *ledger.Record) {
	if rec.Traffic != ledger.TrafficBaseline {
		return
	}
	event, failed := slo.Availability(string(rec.Outcome), string(rec.Reason))
	unsent := rec.Outcome == ledger.Unsent && rec.Reason != ledger.ReasonShutdown
	if !event && !unsent {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.classes == nil {
		a.classes = map[string]*[60]availSlot{}
	}
	ring, ok := a.classes[rec.Class]
	if !ok {
		if len(a.classes) >= maxStatusClasses {
			return
		}
		ring = &[60]availSlot{}
		a.classes[rec.Class] = ring
	}
	m := now.Unix() / 60
	s := &ring[m%int64(len(ring))]
	if s.minute != m {
		*s = availSlot{minute: m}
	}
	during := rec.During == ledger.DuringLadder
	switch {
	case unsent && rec.Reason == ledger.ReasonBudget:
		s.unsentBudget++
	case unsent:
		s.unsentCap++
	case during && failed:
		s.duringSent++
		s.duringFailed++
	case during:
		s.duringSent++
	case failed:
		s.sent++
		s.failed++
		if rec.Status != 0 {
			s.answered++
		}
		if refusal(rec) {
			s.refused++
		}
	default:
		s.sent++
	}
}

// window sums each class's last d (whole minutes, the current one
// included), by class; total sums every class.
func (a *availRing) window(now time.Time, d time.Duration) (byClass map[string]availCounts, total availCounts) {
	a.mu.Lock()
	defer a.mu.Unlock()
	byClass = make(map[string]availCounts, len(a.classes))
	for name, ring := range a.classes {
		c := a.sum(ring, now, d)
		byClass[name] = c
		total.add(c)
	}
	return byClass, total
}

// classWindows sums one class's last short and long (whole minutes, the
// current one included): zero for a class never counted.
func (a *availRing) classWindows(now time.Time, class string, short, long time.Duration) (s, l availCounts) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ring, ok := a.classes[class]; ok {
		return a.sum(ring, now, short), a.sum(ring, now, long)
	}
	return s, l
}

// names appends the names of the classes counted to dst.
func (a *availRing) names(dst []string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	for name := range a.classes {
		dst = append(dst, name)
	}
	return dst
}

// sum sums ring's last d ending at now. a.mu must be held.
func (a *availRing) sum(ring *[60]availSlot, now time.Time, d time.Duration) availCounts {
	n := min(max(int((d+time.Minute-1)/time.Minute), 1), 60)
	m := now.Unix() / 60
	var c availCounts
	for k := int64(0); k < int64(n); k++ {
		if s := ring[(m-k)%int64(len(ring))]; s.minute == m-k {
			c.add(s.counts())
		}
	}
	return c
}

// ClassJudgement is one class's state with the windows that decided it.
type ClassJudgement struct {
	class       string
	state       slo.State
	short, long slo.Counts
	// shortAvail is the short window's availability detail (answered,
	// refused); ttft is the class's first-token percentiles over the long
	// window (SLOW's evidence).
	shortAvail availCounts
	ttft       quantile.Percentiles
}

// Judge is the target's state: its worst class's (DOWN, FAILING, SLOW, OK,
// NO DATA), and every class judged, worst first.
func (s *Memory) Judge(now time.Time) (slo.State, []ClassJudgement) {
	page := slo.PageTiers()[0]
	// Every class counted by either store, each once: the daemon judges
	// every target every second, so no map is built for it.
	names := s.avail.names(make([]string, 0, 4))
	s.mu.Lock()
	for name := range s.classes {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	rolls := make([]*Rolling, len(names))
	for i, name := range names {
		rolls[i] = s.classes[name]
	}
	s.mu.Unlock()
	out := make([]ClassJudgement, 0, len(names))
	for i, n := range names {
		as, al := s.avail.classWindows(now, n, page.Short, page.Long)
		var ls RollingCounts
		var ll RollingWindow
		if c := rolls[i]; c != nil {
			ls, ll = c.Counts(now, page.Short), c.Window(now, page.Long)
		}
		j := ClassJudgement{class: n,
			short:      slo.Counts{Sent: as.Sent, Failed: as.Failed, LatencyEvents: ls.LatencyEvents, LatencyBad: ls.LatencyBad},
			long:       slo.Counts{Sent: al.Sent, Failed: al.Failed, LatencyEvents: ll.LatencyEvents, LatencyBad: ll.LatencyBad},
			shortAvail: as, ttft: ll.TTFT}
		j.state = slo.Judge(j.short, j.long)
		out = append(out, j)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].state != out[j].state {
			return out[i].state.Worse(out[j].state)
		}
		return out[i].class < out[j].class
	})
	if len(out) == 0 {
		return slo.StateNoData, nil
	}
	return out[0].state, out
}

// burn is bad/n over the budget of objective ("-" without events).
func burn(bad, n int, objective float64) string {
	if n == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f×", float64(bad)/float64(n)/(1-objective))
}

// stateFigures are the figures behind a class's state, in words.
func stateFigures(j ClassJudgement) string {
	l := j.long
	return fmt.Sprintf("class %s, last 60 min: %d sent, %d failed (availability burn %s); %d first tokens, %d over the gate (latency burn %s); last 5 min: %d sent, %d failed",
		j.class, l.Sent, l.Failed, burn(l.Failed, l.Sent, slo.AvailabilityObjective),
		l.LatencyEvents, l.LatencyBad, burn(l.LatencyBad, l.LatencyEvents, slo.LatencyObjective),
		j.short.Sent, j.short.Failed)
}

// badgeCauses are the short names of a verdict's causes for the prober
// badge (the cause table's Badge), and the anchor of their evidence: the
// host evidence line for a host cause, the target's generator verdict
// otherwise.
func badgeCauses(causes []verdict.InvalidCause, target string) (names, evidence string) {
	evidence = "#generator-" + target
	var out []string
	for _, c := range causes {
		short := c.Cause.Badge()
		if c.Cause.IsHost() {
			evidence = "#prober-host"
		}
		if !slices.Contains(out, short) {
			out = append(out, short)
		}
	}
	if len(out) == 0 {
		out = []string{"unknown"}
	}
	return strings.Join(out, ", "), evidence
}
