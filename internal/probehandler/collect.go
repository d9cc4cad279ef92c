package probehandler

import (
	"slices"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Collector is a ledger sink that hands each probe the records it planned
// (dispatch.OpenConfig.OnPlan registers them), as they end. It must be
// one of the sinks of the ledger the Handler's group records into. Safe
// for concurrent use.
type Collector struct {
	mu   sync.Mutex
	runs map[uint64]*run // record ID → the probe that planned it
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector { return &Collector{runs: map[uint64]*run{}} }

// Record implements ledger.Sink: a record some probe planned goes to it,
// copied; any other passes by.
func (c *Collector) Record(rec *ledger.Record) {
	c.mu.Lock()
	r := c.runs[rec.ID]
	delete(c.runs, rec.ID)
	c.mu.Unlock()
	if r != nil {
		cp := *rec
		cp.ChunkGaps, cp.ChunkTokens = slices.Clone(rec.ChunkGaps), slices.Clone(rec.ChunkTokens)
		r.finish(cp)
	}
}

// pending is how many planned records have not ended yet (tests).
func (c *Collector) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.runs)
}

// run is one probe's share of the ledger: the records it planned and
// those that ended.
type run struct {
	c    *Collector
	note chan struct{} // a record ended

	mu      sync.Mutex
	planned []uint64
	ended   []ledger.Record
}

func (c *Collector) start() *run { return &run{c: c, note: make(chan struct{}, 1)} }

// plan registers a record the probe's stream just planned (OnPlan).
func (r *run) plan(rec *ledger.Record) {
	r.c.mu.Lock()
	r.c.runs[rec.ID] = r
	r.c.mu.Unlock()
	r.mu.Lock()
	r.planned = append(r.planned, rec.ID)
	r.mu.Unlock()
}

func (r *run) finish(rec ledger.Record) {
	r.mu.Lock()
	r.ended = append(r.ended, rec)
	r.mu.Unlock()
	select {
	case r.note <- struct{}{}:
	default:
	}
}

// wait returns once every planned record ended, or at limit with those
// that did (the rest are counted as planned, never as ended); records come
// in plan order. It unregisters what is left.
func (r *run) wait(limit time.Duration) (ended []ledger.Record, planned int) {
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		r.mu.Lock()
		done := len(r.ended) == len(r.planned)
		r.mu.Unlock()
		if done {
			break
		}
		select {
		case <-r.note:
		case <-t.C:
			r.stop()
			return r.snapshot()
		}
	}
	return r.snapshot()
}

func (r *run) snapshot() ([]ledger.Record, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.ended)
	slices.SortFunc(out, func(a, b ledger.Record) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out, len(r.planned)
}

// stop unregisters the records still pending: they end in the ledger as
// every record does, but this probe no longer waits for them.
func (r *run) stop() {
	r.mu.Lock()
	ids := slices.Clone(r.planned)
	r.mu.Unlock()
	r.c.mu.Lock()
	for _, id := range ids {
		if r.c.runs[id] == r {
			delete(r.c.runs, id)
		}
	}
	r.c.mu.Unlock()
}
