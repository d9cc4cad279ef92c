package stats

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
)

// A retried arrival is one unit of demand however many attempts it took.
func TestRetriesAreNotDemand(t *testing.T) {
	ms := time.Millisecond
	recs := []ledger.Record{
		{ID: 1, Mode: ledger.ModeOpen, Planned: 10 * ms, Dispatched: 11 * ms, End: 20 * ms, Outcome: ledger.Rejected, Reason: ledger.ReasonStatus429, Attempt: 1},
		{ID: 2, Mode: ledger.ModeOpen, Planned: 120 * ms, Dispatched: 121 * ms, FirstContent: 150 * ms, LastContent: 160 * ms, End: 170 * ms, Outcome: ledger.OK, Reason: ledger.ReasonStop, Attempt: 2, RetryOf: 1, FirstPlanned: 10 * ms},
		{ID: 3, Mode: ledger.ModeOpen, Planned: 200 * ms, Dispatched: 201 * ms, FirstContent: 250 * ms, LastContent: 260 * ms, End: 270 * ms, Outcome: ledger.OK, Reason: ledger.ReasonStop},
	}
	s := Summarize(Config{Mode: ledger.ModeOpen, Window: time.Second}, recs)
	if s.Planned != 2 || s.Retries != 1 {
		t.Fatalf("planned %d retries %d, want 2 and 1", s.Planned, s.Retries)
	}
	if s.Good != 2 || s.GoodFraction != 1 {
		t.Fatalf("good %d fraction %v, want 2 and 1", s.Good, s.GoodFraction)
	}
}

// Retries follow their arrival: counted in its window however late they
// were planned, measured per attempt in the per-attempt figures and from the
// first planned time in the arrival figures and the gates; the rate is the
// offered load (first attempts); admitted excludes what never connected.
func TestRetriesFollowTheirArrival(t *testing.T) {
	ms := time.Millisecond
	okAt := func(r ledger.Record, first, end time.Duration) ledger.Record {
		r.FirstContent, r.LastContent, r.End = first, first, end
		r.Outcome, r.Reason = ledger.OK, ledger.ReasonStop
		return r
	}
	recs := []ledger.Record{
		// Arrival A: rejected, then ok on a retry planned after the window.
		{ID: 1, Attempt: 1, Planned: 10 * ms, Dispatched: 11 * ms, Headers: 15 * ms, End: 15 * ms, Outcome: ledger.Rejected, Reason: ledger.ReasonStatus429},
		okAt(ledger.Record{ID: 2, Attempt: 2, RetryOf: 1, FirstPlanned: 10 * ms, Planned: 1200 * ms, Dispatched: 1201 * ms, Headers: 1210 * ms}, 1250*ms, 1300*ms),
		// Arrival B: refused (never connected), a retry reset mid-stream, a
		// last retry refused by the in-flight cap.
		{ID: 3, Attempt: 1, Planned: 200 * ms, Dispatched: 201 * ms, End: 202 * ms, Outcome: ledger.TransportError, Reason: ledger.ReasonConnectionRefused},
		{ID: 4, Attempt: 2, RetryOf: 3, FirstPlanned: 200 * ms, Planned: 300 * ms, Dispatched: 301 * ms, Headers: 310 * ms, End: 320 * ms, Outcome: ledger.TransportError, Reason: ledger.ReasonConnectionReset},
		{ID: 5, Attempt: 3, RetryOf: 4, FirstPlanned: 200 * ms, Planned: 500 * ms, Outcome: ledger.Unsent, Reason: ledger.ReasonClientCap},
		// Arrival C: connect timeout, not retried.
		{ID: 6, Attempt: 1, Planned: 400 * ms, Dispatched: 401 * ms, End: 450 * ms, Outcome: ledger.Timeout, Reason: ledger.ReasonConnect},
		// Arrival D: ok at once.
		okAt(ledger.Record{ID: 7, Attempt: 1, Planned: 600 * ms, Dispatched: 601 * ms, Headers: 610 * ms}, 650*ms, 700*ms),
		// Arrival E: planned after the window, with its retry.
		{ID: 8, Attempt: 1, Planned: 1100 * ms, Dispatched: 1101 * ms, End: 1102 * ms, Outcome: ledger.Rejected, Reason: ledger.ReasonStatus503},
		okAt(ledger.Record{ID: 9, Attempt: 2, RetryOf: 8, FirstPlanned: 1100 * ms, Planned: 1150 * ms, Dispatched: 1151 * ms}, 1160*ms, 1170*ms),
	}
	for i := range recs {
		recs[i].Mode = ledger.ModeOpen
	}
	s := Summarize(Config{Mode: ledger.ModeOpen, Window: time.Second, Gates: Gates{E2E: 500 * ms}}, recs)
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"planned", s.Planned, 4},
		{"retries", s.Retries, 3},
		{"attempts", s.Attempts, 7},
		{"dispatched", s.Dispatched, 6},
		{"unsent", s.Unsent, 1},
		{"first dispatched", s.FirstDispatched, 4},
		{"first unsent", s.FirstUnsent, 0},
		{"admitted", s.Admitted, 3}, // the ok retry, the reset after headers, D
		{"completed", s.Completed, 2},
		{"outside window", s.OutsideWindow, 2},
		{"good", s.Good, 1}, // A's retry took 1.29s from its first planned time
		{"gate misses e2e", s.GateMisses.E2E, 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if s.Attempts != s.Dispatched+s.Unsent || s.Planned != s.FirstDispatched+s.FirstUnsent {
		t.Errorf("identities broken: attempts %d, dispatched %d, unsent %d; planned %d, first dispatched %d, first unsent %d",
			s.Attempts, s.Dispatched, s.Unsent, s.Planned, s.FirstDispatched, s.FirstUnsent)
	}
	if s.AchievedRate != 4 {
		t.Errorf("achieved rate %v, want 4 (first attempts dispatched per second)", s.AchievedRate)
	}
	if want := 3.0 / 6; s.AcceptedFraction != want {
		t.Errorf("accepted fraction %v, want %v", s.AcceptedFraction, want)
	}
	for _, c := range []struct {
		name     string
		p        quantile.Percentiles
		count    int
		max, p50 time.Duration
	}{
		{"e2e (per attempt)", s.E2E, 2, 100 * ms, 100 * ms},
		{"arrival e2e", s.ArrivalE2E, 2, 1290 * ms, 100 * ms},
		{"ttft (per attempt)", s.TTFT, 2, 50 * ms, 50 * ms},
		{"arrival ttft", s.ArrivalTTFT, 2, 1240 * ms, 50 * ms},
	} {
		if c.p.Count != c.count || c.p.Max != c.max || c.p.P50 != c.p50 {
			t.Errorf("%s: count %d p50 %v max %v, want %d, %v, %v", c.name, c.p.Count, c.p.P50, c.p.Max, c.count, c.p50, c.max)
		}
	}
}

// The rate verdict is judged on offered load: retries do not make a run
// look over-driven.
func TestRetriesDoNotInflateTheRate(t *testing.T) {
	ms := time.Millisecond
	var recs []ledger.Record
	id := uint64(0)
	for i := range 100 {
		p := time.Duration(i) * 10 * ms
		id++
		recs = append(recs, ledger.Record{ID: id, Mode: ledger.ModeOpen, Attempt: 1, Planned: p, Dispatched: p + ms, End: p + 2*ms, Outcome: ledger.Rejected, Reason: ledger.ReasonStatus429})
		id++
		recs = append(recs, ledger.Record{ID: id, Mode: ledger.ModeOpen, Attempt: 2, RetryOf: id - 1, FirstPlanned: p, Planned: p + 5*ms, Dispatched: p + 6*ms,
			FirstContent: p + 7*ms, End: p + 8*ms, Outcome: ledger.OK, Reason: ledger.ReasonStop})
	}
	s := Summarize(Config{Mode: ledger.ModeOpen, RequestedRate: 100, Window: time.Second}, recs)
	if !s.Validity.Valid || s.AchievedRate != 100 {
		t.Errorf("achieved rate %v, valid %v %v: want 100 req/s and valid with 100 retries", s.AchievedRate, s.Validity.Valid, s.Validity.Reasons())
	}
	if s.Dispatched != 200 || s.Retries != 100 {
		t.Errorf("dispatched %d retries %d, want 200 and 100", s.Dispatched, s.Retries)
	}
}
