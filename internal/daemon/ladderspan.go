package daemon

import (
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// ladderSpan is when ladders ran against a target, in ledger offsets, so
// that the target's baseline arrivals planned while one ran, or within its
// settle time after it ended, are labelled during="ladder": the ladder's own
// load, not the service, decided their fate, and they are kept out of the
// SLO figures. It belongs to the target's state (it survives reloads: a
// ladder a reload interrupted still settles).
type ladderSpan struct {
	mu       sync.Mutex
	running  int           // ladders running now (0 or 1: one at a time per target)
	start    time.Duration // the latest ladder's start
	endAt    time.Duration // the latest ladder's end (0 while none has ended)
	settle   time.Duration // how long after endAt arrivals still count as during it
	baseline [2]int64      // baseline records finished: [during none, during ladder]
}

// begin marks a ladder starting at ledger offset at.
func (s *ladderSpan) begin(at time.Duration) {
	s.mu.Lock()
	s.running++
	s.start = at
	s.mu.Unlock()
}

// end marks the ladder begun last ending at ledger offset at; arrivals
// planned up to settle later still count as during it.
func (s *ladderSpan) end(at, settle time.Duration) {
	s.mu.Lock()
	if s.running > 0 {
		s.running--
	}
	s.endAt, s.settle = at, settle
	s.mu.Unlock()
}

// during is the label of an arrival planned at ledger offset planned.
func (s *ladderSpan) during(planned time.Duration) ledger.During {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running > 0 && planned >= s.start {
		return ledger.DuringLadder
	}
	if s.endAt > 0 && planned >= s.start && planned < s.endAt+s.settle {
		return ledger.DuringLadder
	}
	return ""
}

// count tallies a finished baseline record by its label (status page).
func (s *ladderSpan) count(rec *ledger.Record) {
	if rec.Traffic != ledger.TrafficBaseline {
		return
	}
	i := 0
	if rec.During == ledger.DuringLadder {
		i = 1
	}
	s.mu.Lock()
	s.baseline[i]++
	s.mu.Unlock()
}

// snapshot returns the baseline counts and, when a ladder ran, the ledger
// offset until which baseline arrivals are labelled during it (running: a
// ladder is running now).
func (s *ladderSpan) snapshot() (none, during int64, until time.Duration, running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.endAt > 0 {
		until = s.endAt + s.settle
	}
	return s.baseline[0], s.baseline[1], until, s.running > 0
}
