package ledger

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// recSink keeps a copy of every finished record, in finishing order.
type recSink struct {
	mu   sync.Mutex
	recs []Record
}

func (s *recSink) Record(r *Record) {
	s.mu.Lock()
	s.recs = append(s.recs, *r)
	s.mu.Unlock()
}

func (s *recSink) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.recs)
}

func TestPlanDispatchFinishCounts(t *testing.T) {
	sink := &recSink{}
	var funcCalls atomic.Int32
	l := New(time.Now(), sink, SinkFunc(func(*Record) { funcCalls.Add(1) }))
	a := l.Plan(Meta{Traffic: TrafficProbe, Mode: ModeOpen, Target: "t", Class: "c"}, 10*time.Millisecond)
	b := l.Plan(Meta{}, 20*time.Millisecond)
	c := l.Plan(Meta{}, 30*time.Millisecond)
	if a.ID == b.ID || b.ID == c.ID || a.Planned != 10*time.Millisecond || a.Target != "t" {
		t.Fatalf("records %+v %+v", a, b)
	}
	if got := l.Counts(); got.Planned != 3 || got.Attempts != 3 || got.Pending != 3 || got.Finished != 0 {
		t.Fatalf("counts after planning: %+v", got)
	}
	l.MarkDispatched(a)
	l.MarkDispatched(b)
	if a.Dispatched <= 0 {
		t.Fatalf("dispatched offset %v", a.Dispatched)
	}
	if err := l.Finish(a, OK, ReasonStop, ""); err != nil {
		t.Fatal(err)
	}
	if err := l.Finish(b, Timeout, ReasonIdle, "idle gap"); err != nil {
		t.Fatal(err)
	}
	if err := l.Unsent(c, ReasonClientCap); err != nil {
		t.Fatal(err)
	}
	got := l.Counts()
	want := Counts{Planned: 3, Attempts: 3, Dispatched: 2, Unsent: 1, Finished: 3}
	if got.Planned != want.Planned || got.Attempts != want.Attempts || got.Dispatched != want.Dispatched ||
		got.Unsent != want.Unsent || got.Finished != want.Finished || got.Pending != 0 {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	if got.ByOutcome[OK] != 1 || got.ByOutcome[Timeout] != 1 || got.ByOutcome[Unsent] != 1 {
		t.Errorf("by outcome %v", got.ByOutcome)
	}
	if err := l.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if sink.len() != 3 || funcCalls.Load() != 3 {
		t.Errorf("sinks saw %d and %d records, want 3 each", sink.len(), funcCalls.Load())
	}
	if sink.recs[0].ID != a.ID || sink.recs[2].Outcome != Unsent || sink.recs[2].End != 0 {
		t.Errorf("sink order or unsent end wrong: %+v", sink.recs)
	}
	if a.End < a.Dispatched || b.Error != "idle gap" {
		t.Errorf("end %v before dispatch %v, or error %q", a.End, a.Dispatched, b.Error)
	}
}

func TestCountsSnapshotIsACopy(t *testing.T) {
	l := New(time.Now())
	r := l.Plan(Meta{}, 1)
	_ = l.Unsent(r, ReasonBudget)
	c := l.Counts()
	c.ByOutcome[Unsent] = 99
	if l.Counts().ByOutcome[Unsent] != 1 {
		t.Error("mutating a Counts snapshot changed the ledger")
	}
}

func TestDoubleFinishIsAViolation(t *testing.T) {
	sink := &recSink{}
	l := New(time.Now(), sink)
	r := l.Plan(Meta{}, 1)
	l.MarkDispatched(r)
	if err := l.Finish(r, OK, ReasonStop, ""); err != nil {
		t.Fatal(err)
	}
	err := l.Finish(r, Censored, ReasonDrainDeadline, "")
	if !errors.Is(err, ErrFinished) {
		t.Fatalf("second Finish: err = %v, want ErrFinished", err)
	}
	if r.Outcome != OK || sink.len() != 1 {
		t.Errorf("first outcome must stand: %s, sink saw %d", r.Outcome, sink.len())
	}
	if err := l.Verify(); !errors.Is(err, ErrFinished) {
		t.Errorf("Verify: %v, want the ErrFinished violation", err)
	}
	if c := l.Counts(); c.Finished != 1 || c.ByOutcome[Censored] != 0 {
		t.Errorf("counts %+v", c)
	}
}

func TestFinishRefusesWhatBreaksTheLedger(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(l *Ledger, r *Record) error
		want string
	}{
		{"reason of another outcome", func(l *Ledger, r *Record) error { l.MarkDispatched(r); return l.Finish(r, OK, ReasonStatus429, "") }, "does not belong"},
		{"unknown outcome", func(l *Ledger, r *Record) error { l.MarkDispatched(r); return l.Finish(r, "lost", ReasonStop, "") }, "unknown outcome"},
		{"sent outcome without dispatch", func(l *Ledger, r *Record) error { return l.Finish(r, OK, ReasonStop, "") }, "without dispatch"},
		{"unsent after dispatch", func(l *Ledger, r *Record) error { l.MarkDispatched(r); return l.Unsent(r, ReasonClientCap) }, "unsent after dispatch"},
		{"unsent with a sent reason", func(l *Ledger, r *Record) error { return l.Unsent(r, ReasonStop) }, "does not belong"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New(time.Now())
			r := l.Plan(Meta{}, 1)
			err := tc.do(l, r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if c := l.Counts(); c.Pending != 1 || c.Finished != 0 {
				t.Errorf("a refused finish changed the counts: %+v", c)
			}
			if verr := l.Verify(); verr == nil || !strings.Contains(verr.Error(), tc.want) {
				t.Errorf("Verify = %v, want the violation %q", verr, tc.want)
			}
		})
	}
}

func TestCensorPending(t *testing.T) {
	l := New(time.Now())
	sent := l.Plan(Meta{}, 1)
	l.MarkDispatched(sent)
	never := l.Plan(Meta{}, 2)
	done := l.Plan(Meta{}, 3)
	l.MarkDispatched(done)
	_ = l.Finish(done, OK, ReasonStop, "")
	if n := l.CensorPending(); n != 1 {
		t.Errorf("CensorPending = %d, want 1", n)
	}
	if sent.Outcome != Censored || sent.Reason != ReasonDrainDeadline || sent.End == 0 || sent.Age() <= 0 {
		t.Errorf("in-flight record: %s/%s end %v", sent.Outcome, sent.Reason, sent.End)
	}
	if never.Outcome != Unsent || never.Reason != ReasonShutdown {
		t.Errorf("never-sent record: %s/%s", never.Outcome, never.Reason)
	}
	if done.Outcome != OK {
		t.Errorf("finished record changed to %s", done.Outcome)
	}
	if err := l.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if n := l.CensorPending(); n != 0 {
		t.Errorf("second CensorPending = %d", n)
	}
}

// Retries are attempts, not demand: Planned counts first attempts only.
func TestAttemptsCountRetriesApart(t *testing.T) {
	l := New(time.Now())
	for attempt := 1; attempt <= 3; attempt++ {
		r := l.Plan(Meta{Attempt: attempt}, time.Duration(attempt))
		l.MarkDispatched(r)
		o, reason := Rejected, ReasonStatus429
		if attempt == 3 {
			o, reason = OK, ReasonStop
		}
		if err := l.Finish(r, o, reason, ""); err != nil {
			t.Fatal(err)
		}
	}
	noRetry := l.Plan(Meta{}, 4) // retries off: Attempt 0
	_ = l.Unsent(noRetry, ReasonShutdown)
	c := l.Counts()
	if c.Planned != 2 || c.Attempts != 4 || c.Dispatched != 3 || c.Unsent != 1 || c.Finished != 4 {
		t.Errorf("counts %+v: want planned 2, attempts 4, dispatched 3, unsent 1", c)
	}
	if err := l.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

// Many goroutines race to finish the same records: exactly one wins each.
func TestConcurrentFinishExactlyOnce(t *testing.T) {
	sink := &recSink{}
	l := New(time.Now(), sink)
	const n, racers = 200, 4
	recs := make([]*Record, n)
	for i := range recs {
		recs[i] = l.Plan(Meta{}, time.Duration(i+1))
		l.MarkDispatched(recs[i])
	}
	var wins, losses atomic.Int32
	var wg sync.WaitGroup
	for k := range racers {
		wg.Go(func() {
			for _, r := range recs {
				var err error
				if k%2 == 0 {
					err = l.Finish(r, OK, ReasonStop, "")
				} else {
					err = l.Finish(r, Censored, ReasonDrainDeadline, "")
				}
				if err == nil {
					wins.Add(1)
				} else if errors.Is(err, ErrFinished) {
					losses.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if wins.Load() != n || losses.Load() != n*(racers-1) || sink.len() != n {
		t.Errorf("wins %d losses %d sink %d; want %d, %d, %d", wins.Load(), losses.Load(), sink.len(), n, n*(racers-1), n)
	}
	c := l.Counts()
	if c.Finished != n || c.ByOutcome[OK]+c.ByOutcome[Censored] != n {
		t.Errorf("counts %+v", c)
	}
}

func TestNowClampedAfterEpoch(t *testing.T) {
	epoch := time.Now().Add(time.Hour) // in the future: Now is clamped
	l := New(epoch)
	if got := l.Now(); got != 1 {
		t.Errorf("Now before the epoch = %v, want 1ns", got)
	}
}

func TestErrorTextBounded(t *testing.T) {
	l := New(time.Now())
	r := l.Plan(Meta{}, 1)
	l.MarkDispatched(r)
	_ = l.Finish(r, HTTPError, ReasonServerError, strings.Repeat("x", 1000))
	if len(r.Error) != 160 {
		t.Errorf("error text %d bytes, want 160", len(r.Error))
	}
	// A multi-byte character across the bound is dropped whole, never split.
	m := l.Plan(Meta{}, 1)
	l.MarkDispatched(m)
	_ = l.Finish(m, HTTPError, ReasonServerError, strings.Repeat("x", 159)+"é and more")
	if m.Error != strings.Repeat("x", 159) || !utf8.ValidString(m.Error) {
		t.Errorf("error text %q (%d bytes) split a character or kept too much", m.Error, len(m.Error))
	}
}

// TestFinishCleansText: whatever an executor put in the record's text
// fields, the ledger keeps them valid, printable and bounded (the one rule,
// sanitize), so that no sink writes a control character or invalid UTF-8.
func TestFinishCleansText(t *testing.T) {
	l := New(time.Now())
	r := l.Plan(Meta{}, 1)
	l.MarkDispatched(r)
	r.Model = "m\x1b[2J\x00" + strings.Repeat("m", 300)
	r.FinishReason = "stop\xff\a"
	_ = l.Finish(r, StreamError, ReasonMalformed, "bad \x1b]0;title\x07 text")
	if r.Error != "bad \uFFFD]0;title\uFFFD text" || r.FinishReason != "stop\uFFFD\uFFFD" ||
		len(r.Model) != MaxModelBytes || !strings.HasPrefix(r.Model, "m\uFFFD[2J\uFFFD") {
		t.Errorf("error %q, finish %q, model %q (%d bytes)", r.Error, r.FinishReason, r.Model, len(r.Model))
	}
}

func TestRecordFigures(t *testing.T) {
	ms := time.Millisecond
	full := Record{Planned: 10 * ms, Dispatched: 12 * ms, FirstContent: 50 * ms, FirstReasoning: 30 * ms, LastContent: 150 * ms, End: 160 * ms,
		Usage: Usage{Known: true, Completion: 11}}
	unsent := Record{Planned: 10 * ms}
	oneTok := full
	oneTok.Usage.Completion = 1
	noUsage := full
	noUsage.Usage = Usage{}
	type fig struct {
		d  time.Duration
		ok bool
	}
	for _, tc := range []struct {
		name string
		got  func() (time.Duration, bool)
		want fig
	}{
		{"ttft from planned", full.TTFT, fig{40 * ms, true}},
		{"ttft from dispatch", full.TTFTFromDispatch, fig{38 * ms, true}},
		{"ttfr", full.TTFR, fig{20 * ms, true}},
		{"e2e", full.E2E, fig{150 * ms, true}},
		{"dispatch lag", full.DispatchLag, fig{2 * ms, true}},
		{"tpot", full.TPOT, fig{10 * ms, true}},
		{"tpot one token", oneTok.TPOT, fig{0, false}},
		{"tpot no usage", noUsage.TPOT, fig{0, false}},
		{"unsent ttft", unsent.TTFT, fig{0, false}},
		{"unsent e2e", unsent.E2E, fig{0, false}},
		{"unsent lag", unsent.DispatchLag, fig{0, false}},
		{"unsent ttfr", unsent.TTFR, fig{0, false}},
		{"unsent ttft from dispatch", unsent.TTFTFromDispatch, fig{0, false}},
	} {
		if d, ok := tc.got(); d != tc.want.d || ok != tc.want.ok {
			t.Errorf("%s = %v, %v; want %v, %v", tc.name, d, ok, tc.want.d, tc.want.ok)
		}
	}
	if full.Age() != 150*ms || unsent.Age() != 0 || !full.Sent() || unsent.Sent() {
		t.Errorf("Age/Sent: %v %v %v %v", full.Age(), unsent.Age(), full.Sent(), unsent.Sent())
	}
}

func TestDuringIsPlannedAndBounded(t *testing.T) {
	l := New(time.Now())
	a := l.Plan(Meta{Traffic: TrafficBaseline, Mode: ModeOpen, Target: "t", Class: "c", During: DuringLadder}, time.Millisecond)
	b := l.Plan(Meta{Traffic: TrafficBaseline, Mode: ModeOpen, Target: "t", Class: "c"}, 2*time.Millisecond)
	if a.During != DuringLadder || b.During != "" {
		t.Fatalf("Plan: during %q and %q, want ladder and unset", a.During, b.During)
	}
	if a.During.Label() != "ladder" || b.During.Label() != "none" {
		t.Fatalf("labels %q, %q: want ladder, none (never empty)", a.During.Label(), b.During.Label())
	}
	for _, r := range []*Record{a, b} {
		if err := l.Unsent(r, ReasonShutdown); err != nil {
			t.Fatal(err)
		}
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !strings.Contains(string(ja), `"during":"ladder"`) || strings.Contains(string(jb), `"during"`) {
		t.Fatalf("JSON: %s / %s: want during only on the ladder-time record", ja, jb)
	}
	seen := map[string]bool{}
	for _, d := range DuringValues {
		if d == "" || seen[d.Label()] {
			t.Fatalf("DuringValues %v: empty or duplicate value", DuringValues)
		}
		seen[d.Label()] = true
	}
}
