package daemon

import (
	"sync"
	"time"
)

// flightSet tracks a target's requests in flight and the planned offset of
// the oldest (for llmprobe_oldest_in_flight_seconds: age from planned).
type flightSet struct {
	mu sync.Mutex
	m  map[uint64]time.Duration
}

func newFlightSet() *flightSet { return &flightSet{m: map[uint64]time.Duration{}} }

func (f *flightSet) add(id uint64, planned time.Duration) {
	f.mu.Lock()
	f.m[id] = planned
	f.mu.Unlock()
}

func (f *flightSet) remove(id uint64) {
	f.mu.Lock()
	delete(f.m, id)
	f.mu.Unlock()
}

func (f *flightSet) snapshot() (n int, oldestPlanned time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	first := true
	for _, p := range f.m {
		if first || p < oldestPlanned {
			oldestPlanned, first = p, false
		}
	}
	return len(f.m), oldestPlanned
}
