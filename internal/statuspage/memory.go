package statuspage

import (
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// MaxFailures is how many failures the page lists.
const MaxFailures = 8

// Bounds of what the status page keeps per target.
const (
	// statusSpan is the longest window of the baseline figures (the page
	// shows the last 5 and 60 minutes), in one-minute slots.
	statusSpan = time.Hour
	// maxLadderHistory is how many ladders' capacities are kept.
	maxLadderHistory = 20
)

// Memory is what the status page remembers of a target beyond the
// daemon's live state, kept across reloads: the recent baseline figures (a
// Rolling, bounded), the last ladders' capacities and when the
// target's identity last changed.
type Memory struct {
	rolling *Rolling
	// avail counts the availability SLI's events per class, as the rules
	// do (targetstate.go).
	avail availRing
	// buffered counts the streams an intermediary held (path.go).
	buffered bufferedCount

	mu      sync.Mutex
	classes map[string]*Rolling // per class, for the SLO rows: the alerts judge each class
	ladders []ladderPoint       // oldest first, at most maxLadderHistory
	seeded  bool                // the history file was read once

	model, version string
	since          time.Time // first seen or last changed
	changes        int
}

// ladderPoint is one ladder's capacity, as the history shows it.
type ladderPoint struct {
	finished time.Time
	capacity float64
	step     int
	bound    ladderresult.Bound
	aborted  bool
	trigger  string
	// id is the identity the ladder measured (its result's, recorded when
	// it began), else the target's when the ladder was added (zero: not
	// known, e.g. an old history line).
	id IdentityOf
	// partial: a deploy or restart cut the ladder; its capacity is a lower
	// bound of id, never compared (docs/ladder.md, a deploy during a ladder).
	partial bool
	// proberAborted: the prober stopped it (generator invalid, unsent,
	// interrupted), not a rule about the target.
	proberAborted bool
	// judged: at least one step was valid and had arrivals (a ladder with
	// no capacity and such a step found none; one without found nothing).
	judged bool
}

// NewMemory returns an empty memory.
func NewMemory() *Memory {
	return &Memory{rolling: NewRolling(statusSpan, time.Minute), classes: map[string]*Rolling{}}
}

// maxStatusClasses bounds the per-class windows kept (a target's classes
// come from its configuration; a reload may rename them).
const maxStatusClasses = 64

// Record takes one finished record into the target's window and its
// class's.
func (s *Memory) Record(now time.Time, rec *ledger.Record, g stats.Gates) {
	s.rolling.Record(now, rec, g)
	s.avail.record(now, rec)
	s.buffered.record(now, rec)
	if rec.Traffic != ledger.TrafficBaseline {
		return
	}
	s.mu.Lock()
	c, ok := s.classes[rec.Class]
	if !ok && len(s.classes) < maxStatusClasses {
		c = NewRolling(statusSpan, time.Minute, TTFTOnly()) // read for SLI counts and TTFT only
		s.classes[rec.Class] = c
	}
	s.mu.Unlock()
	if c != nil {
		c.Record(now, rec, g)
	}
}

func pointOf(res ladder.Result) ladderPoint {
	p := ladderPoint{finished: res.Finished, capacity: res.Capacity, step: res.CapacityStep, bound: res.CapacityBound,
		aborted: res.Aborted, trigger: res.Trigger, id: IdentityOf(res.Identity), partial: res.Partial != "", judged: res.Judged()}
	p.proberAborted = proberAborted(res)
	return p
}

// AddLadder appends a finished ladder to the history.
func (s *Memory) AddLadder(res ladder.Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := pointOf(res)
	if p.id == (IdentityOf{}) {
		p.id = IdentityOf{Model: s.model, Version: s.version}
	}
	s.ladders = append(s.ladders, p)
	if n := len(s.ladders); n > maxLadderHistory {
		s.ladders = append(s.ladders[:0:0], s.ladders[n-maxLadderHistory:]...)
	}
}

// Seed reads the last ladders of the target's history file once (so the
// history survives a restart); ladders already recorded stay after them.
// A history that cannot be read leaves the in-memory history as it is.
func (s *Memory) Seed(path string) error {
	s.mu.Lock()
	if s.seeded || path == "" {
		s.mu.Unlock()
		return nil
	}
	s.seeded = true
	s.mu.Unlock()
	old, _, err := ladder.ReadHistory(path, maxLadderHistory)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pts := make([]ladderPoint, 0, len(old)+len(s.ladders))
	for _, r := range old {
		pts = append(pts, pointOf(r))
	}
	pts = append(pts, s.ladders...)
	if n := len(pts); n > maxLadderHistory {
		pts = pts[n-maxLadderHistory:]
	}
	s.ladders = pts
	return nil
}

// history returns the ladders kept, oldest first.
func (s *Memory) history() []ladderPoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ladderPoint(nil), s.ladders...)
}

// NoteIdentity records the published identity at now: the first one, or
// a change, moves since.
func (s *Memory) NoteIdentity(now time.Time, model, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.since.IsZero():
		s.since = now
	case model != s.model || version != s.version:
		s.since = now
		s.changes++
	default:
		return
	}
	s.model, s.version = model, version
}

// Identity is the identity last noted (zero before any).
func (s *Memory) Identity() IdentityOf {
	s.mu.Lock()
	defer s.mu.Unlock()
	return IdentityOf{Model: s.model, Version: s.version}
}

// identity returns the identity last published, when it was first seen or
// last changed, and the number of changes.
func (s *Memory) identity() (model, version string, since time.Time, changes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model, s.version, s.since, s.changes
}

// Regression compares the last ladder with the previous identity's last
// complete, measured one: nil unless the last ladder measured a capacity
// (not a lower bound, not cut by a deploy, not aborted by the prober)
// below fraction × the previous identity's, or found none (it ran to its
// end and a valid step met no gate: NewNone). Ladders of an unknown
// identity, lower bounds and ladders a deploy cut are never compared.
func (s *Memory) Regression(fraction float64) *Regression {
	pts := s.history()
	n := len(pts)
	if n == 0 {
		return nil
	}
	last := pts[n-1]
	none := last.step == 0 && last.judged
	if last.proberAborted || last.partial || (last.step == 0 && !none) || last.bound == ladderresult.BoundLower || last.id == (IdentityOf{}) {
		return nil
	}
	for i := n - 2; i >= 0; i-- {
		p := pts[i]
		switch {
		case p.id == last.id || p.step == 0 || p.proberAborted || p.partial || p.bound == ladderresult.BoundLower:
			continue
		case p.id == (IdentityOf{}) || (!none && last.capacity >= fraction*p.capacity):
			return nil
		}
		r := &Regression{Prev: p.capacity, New: last.capacity, NewNone: none, PrevIdentity: p.id, NewIdentity: last.id,
			PrevAt: p.finished, NewAt: last.finished, Fraction: fraction}
		if none {
			r.New = 0
		}
		return r
	}
	return nil
}
