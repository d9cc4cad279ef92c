package ledger

import (
	"slices"
	"sort"
	"sync"
)

// Ring is a Sink that keeps, per target, the last N finished records and, in
// a separate and usually longer ring, the last M failures (every outcome but
// ok), so that a rare failure is still visible after many successes. Memory
// is bounded: at most N+M records per target, and at most MaxTargets
// targets (further targets are not kept); a ring grows to its bound as
// records come, none is reserved ahead. Records are copied on the way in.
// It is safe for concurrent use.
type Ring struct {
	last, failures, maxTargets int

	mu      sync.Mutex
	targets map[string]*targetRing
}

type targetRing struct {
	all, failed ring
}

// ring is a circular buffer of at most max record copies. It starts
// empty and grows as records come (doubling, from ringMinGrow, up to max),
// so a target's rings cost what they hold: a healthy target's failures
// ring nothing, a new target's last-records ring a few records, not the
// full bound reserved at its first record (200 + 1,000 records of 584 bytes
// each with the defaults: 700 KB a target).
type ring struct {
	buf  []Record
	next int
	max  int
}

// ringMinGrow is the first capacity a ring takes.
const ringMinGrow = 8

func newRing(n int) ring { return ring{max: n} }

func (r *ring) put(rec Record) {
	if r.max == 0 {
		return
	}
	if len(r.buf) < r.max {
		if len(r.buf) == cap(r.buf) {
			grown := make([]Record, len(r.buf), min(r.max, max(ringMinGrow, 2*cap(r.buf))))
			copy(grown, r.buf)
			r.buf = grown
		}
		r.buf = append(r.buf, rec)
		return
	}
	r.buf[r.next] = rec
	r.next = (r.next + 1) % len(r.buf)
}

// items returns the contents oldest first.
func (r *ring) items() []Record {
	out := make([]Record, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	out = append(out, r.buf[:r.next]...)
	return out
}

// DefaultRingTargets bounds the number of targets a Ring keeps.
const DefaultRingTargets = 256

// NewRing returns a ring sink keeping the last n records and the last
// failures failed records per target. Negative sizes are treated as zero.
func NewRing(n, failures int) *Ring {
	return &Ring{last: max(n, 0), failures: max(failures, 0), maxTargets: DefaultRingTargets, targets: make(map[string]*targetRing)}
}

// RingMaxChunks bounds the chunk gaps and chunk tokens a ring copy keeps
// (the first ones; the copy is marked chunks_truncated): the ring is for a
// person reading /debug/requests, and a full per-request array (up to the
// client's bound) in each of a thousand copies per target would hold
// ~150 MiB per target outside every other memory bound.
const RingMaxChunks = 256

// Record implements Sink.
func (g *Ring) Record(r *Record) {
	c := *r
	c.ChunkGaps = slices.Clone(r.ChunkGaps[:min(len(r.ChunkGaps), RingMaxChunks)])
	c.ChunkTokens = slices.Clone(r.ChunkTokens[:min(len(r.ChunkTokens), RingMaxChunks)])
	if len(r.ChunkGaps) > RingMaxChunks || len(r.ChunkTokens) > RingMaxChunks {
		c.ChunksTruncated = true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	t, ok := g.targets[r.Target]
	if !ok {
		if len(g.targets) >= g.maxTargets {
			return
		}
		t = &targetRing{all: newRing(g.last), failed: newRing(g.failures)}
		g.targets[r.Target] = t
	}
	t.all.put(c)
	if c.Outcome.Failed() {
		t.failed.put(c)
	}
}

// TargetRecords is a snapshot of one target's rings, oldest first.
type TargetRecords struct {
	Target   string   `json:"target"`
	Last     []Record `json:"last"`
	Failures []Record `json:"failures"`
}

// Snapshot returns a copy of every target's rings, sorted by target name.
func (g *Ring) Snapshot() []TargetRecords {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]TargetRecords, 0, len(g.targets))
	for name, t := range g.targets {
		out = append(out, TargetRecords{Target: name, Last: t.all.items(), Failures: t.failed.items()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Target < out[j].Target })
	return out
}

// LastFailures returns a copy of one target's last n failed records,
// newest first (none when unknown): what the status page lists, without
// copying the target's other records (the daemon reads it for every
// target every second).
func (g *Ring) LastFailures(name string, n int) []Record {
	g.mu.Lock()
	defer g.mu.Unlock()
	t, ok := g.targets[name]
	if !ok || n <= 0 {
		return nil
	}
	r := &t.failed
	out := make([]Record, 0, min(n, len(r.buf)))
	for i := 0; i < len(r.buf) && len(out) < n; i++ {
		out = append(out, r.buf[(r.next-1-i+2*len(r.buf))%len(r.buf)])
	}
	return out
}

// Target returns a copy of one target's rings (empty when unknown).
func (g *Ring) Target(name string) TargetRecords {
	g.mu.Lock()
	defer g.mu.Unlock()
	t, ok := g.targets[name]
	if !ok {
		return TargetRecords{Target: name, Last: []Record{}, Failures: []Record{}}
	}
	return TargetRecords{Target: name, Last: t.all.items(), Failures: t.failed.items()}
}
