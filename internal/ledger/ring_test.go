package ledger

import (
	"testing"
	"time"
)

func TestRingKeepsLastAndFailuresLonger(t *testing.T) {
	tests := []struct {
		name        string
		n, failures int
		outcomes    []Outcome
		wantLastIDs []uint64
		wantFailIDs []uint64
	}{
		{"under capacity", 3, 2, []Outcome{OK, Timeout}, []uint64{1, 2}, []uint64{2}},
		{"wraps", 2, 3, []Outcome{Timeout, OK, OK, Rejected, OK}, []uint64{4, 5}, []uint64{1, 4}},
		{"failure ring wraps", 1, 2, []Outcome{Timeout, Rejected, StreamError, OK}, []uint64{4}, []uint64{2, 3}},
		{"zero sizes keep nothing", 0, 0, []Outcome{OK, Timeout}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := NewRing(tc.n, tc.failures)
			for i, o := range tc.outcomes {
				g.Record(&Record{ID: uint64(i + 1), Target: "a", Outcome: o})
			}
			got := g.Target("a")
			if ids := idsOf(got.Last); !equalIDs(ids, tc.wantLastIDs) {
				t.Errorf("last = %v, want %v", ids, tc.wantLastIDs)
			}
			if ids := idsOf(got.Failures); !equalIDs(ids, tc.wantFailIDs) {
				t.Errorf("failures = %v, want %v", ids, tc.wantFailIDs)
			}
		})
	}
}

func TestRingCopiesAndSeparatesTargets(t *testing.T) {
	g := NewRing(4, 4)
	r := &Record{ID: 1, Target: "b", Outcome: OK, ChunkGaps: []time.Duration{5}, ChunkTokens: []int{0, 3}}
	g.Record(r)
	g.Record(&Record{ID: 2, Target: "a", Outcome: Timeout})
	r.ChunkGaps[0] = 99
	r.ChunkTokens[1] = 99
	r.Target = "changed"
	snap := g.Snapshot()
	if len(snap) != 2 || snap[0].Target != "a" || snap[1].Target != "b" {
		t.Fatalf("snapshot targets = %+v", snap)
	}
	if got := snap[1].Last[0].ChunkGaps[0]; got != 5 {
		t.Errorf("ring shares the caller's slice: gap = %v", got)
	}
	if got := snap[1].Last[0].ChunkTokens[1]; got != 3 {
		t.Errorf("ring shares the caller's chunk tokens: %v", got)
	}
	if got := g.Target("nobody"); len(got.Last) != 0 || got.Last == nil {
		t.Errorf("unknown target = %+v, want empty non-nil", got)
	}
}

func TestRingBoundsTargets(t *testing.T) {
	g := NewRing(1, 1)
	g.maxTargets = 2
	for i, name := range []string{"a", "b", "c"} {
		g.Record(&Record{ID: uint64(i + 1), Target: name, Outcome: OK})
	}
	if n := len(g.Snapshot()); n != 2 {
		t.Errorf("targets kept = %d, want 2", n)
	}
}

func idsOf(rs []Record) []uint64 {
	var out []uint64
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func equalIDs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRingBoundsChunkArrays: a ring copy keeps at most RingMaxChunks chunk
// gaps and tokens (the first ones) and says it was cut; the record it was
// copied from is untouched, and a short record is copied whole.
func TestRingBoundsChunkArrays(t *testing.T) {
	g := NewRing(4, 4)
	long := &Record{ID: 1, Target: "t", Outcome: OK, Reason: ReasonStop,
		ChunkGaps: make([]time.Duration, RingMaxChunks+100), ChunkTokens: make([]int, RingMaxChunks+101)}
	for i := range long.ChunkGaps {
		long.ChunkGaps[i] = time.Duration(i + 1)
	}
	short := &Record{ID: 2, Target: "t", Outcome: OK, Reason: ReasonStop, ChunkGaps: []time.Duration{5, 6}, ChunkTokens: []int{1, 1, 1}}
	g.Record(long)
	g.Record(short)
	got := g.Target("t").Last
	if len(got) != 2 {
		t.Fatalf("%d records kept, want 2", len(got))
	}
	if c := got[0]; len(c.ChunkGaps) != RingMaxChunks || len(c.ChunkTokens) != RingMaxChunks || !c.ChunksTruncated || c.ChunkGaps[RingMaxChunks-1] != RingMaxChunks {
		t.Errorf("long copy: %d gaps, %d tokens, truncated %v, last gap %v; want the first %d of each, marked truncated",
			len(c.ChunkGaps), len(c.ChunkTokens), c.ChunksTruncated, c.ChunkGaps[len(c.ChunkGaps)-1], RingMaxChunks)
	}
	if len(long.ChunkGaps) != RingMaxChunks+100 || long.ChunksTruncated {
		t.Error("the original record was changed")
	}
	if c := got[1]; len(c.ChunkGaps) != 2 || len(c.ChunkTokens) != 3 || c.ChunksTruncated {
		t.Errorf("short copy: %+v, want it whole and not marked", c)
	}
}

// TestRingGrowsToItsBound: a ring reserves nothing ahead, grows as records
// come and never past its bound, and keeps the newest in order once full.
func TestRingGrowsToItsBound(t *testing.T) {
	g := NewRing(20, 100)
	g.Record(&Record{ID: 1, Target: "a", Outcome: OK})
	tr := g.targets["a"]
	if c := cap(tr.failed.buf); c != 0 {
		t.Errorf("failures ring of a target without failures holds room for %d records, want 0", c)
	}
	if c := cap(tr.all.buf); c > ringMinGrow {
		t.Errorf("last-records ring holds room for %d records after one, want at most %d", c, ringMinGrow)
	}
	for i := 2; i <= 45; i++ {
		g.Record(&Record{ID: uint64(i), Target: "a", Outcome: OK})
		if c := cap(tr.all.buf); c > 20 {
			t.Fatalf("after %d records the ring holds room for %d, past its bound 20", i, c)
		}
	}
	got := idsOf(g.Target("a").Last)
	want := make([]uint64, 0, 20)
	for i := 26; i <= 45; i++ {
		want = append(want, uint64(i))
	}
	if !equalIDs(got, want) {
		t.Errorf("last = %v, want %v", got, want)
	}
}

// TestRingLastFailures: the last n failures, newest first, the same
// records Target's Failures holds in reverse, before and after the ring
// wraps.
func TestRingLastFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures int // ring size
		recorded int // failed records, ids 1..recorded
		n        int
		want     []uint64
	}{
		{"empty", 4, 0, 8, nil},
		{"under capacity", 4, 3, 8, []uint64{3, 2, 1}},
		{"fewer asked", 4, 3, 2, []uint64{3, 2}},
		{"wrapped", 4, 7, 8, []uint64{7, 6, 5, 4}},
		{"wrapped, fewer asked", 4, 9, 3, []uint64{9, 8, 7}},
		{"none asked", 4, 3, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewRing(2, tc.failures)
			for i := 1; i <= tc.recorded; i++ {
				g.Record(&Record{ID: uint64(i), Target: "a", Outcome: Timeout})
				g.Record(&Record{ID: 1000 + uint64(i), Target: "a", Outcome: OK})
			}
			var got []uint64
			for _, r := range g.LastFailures("a", tc.n) {
				got = append(got, r.ID)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("ids %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("ids %v, want %v", got, tc.want)
				}
			}
			if g.LastFailures("unknown", tc.n) != nil {
				t.Error("an unknown target has failures")
			}
		})
	}
}
