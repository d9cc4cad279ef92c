package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/statuspage"
)

// baselineRec is a finished baseline record planned at planned: ok with
// the TTFT, or failed (ttft < 0: connection refused).
func baselineRec(planned, ttft time.Duration, during ledger.During) *ledger.Record {
	rec := &ledger.Record{Traffic: ledger.TrafficBaseline, Planned: planned, Dispatched: planned, During: during}
	if ttft < 0 {
		rec.Outcome, rec.Reason = ledger.TransportError, ledger.ReasonConnectionRefused
		return rec
	}
	rec.Outcome, rec.Reason = ledger.OK, ledger.ReasonStop
	rec.FirstContent = planned + ttft
	return rec
}

// TestSettleWatch: the wait before a ladder ends only once the previous
// ladder's requests ended and settleK baseline answers since the reference
// point were ok and within the normal range; a restart (refused, then a
// cold start) is waited out.
func TestSettleWatch(t *testing.T) {
	const ms = time.Millisecond
	var s settleWatch
	for i := range 10 { // the normal range: 50 ms → up to 150 ms (the floor)
		s.record(baselineRec(time.Duration(i)*time.Second, 50*ms, ""))
	}
	limit := s.limit()
	if limit != 150*ms {
		t.Fatalf("limit %v, want 150ms (50ms + the 100ms floor)", limit)
	}
	from := 20 * time.Second // the previous ladder's end
	s.fly(2)
	steps := []struct {
		name string
		do   func()
		want string // "" settled, else a part of why not
	}{
		{"ladder requests in flight", func() {}, "2 requests of the previous ladder still in flight"},
		{"ladder ended, no baseline since", func() { s.fly(-2) }, "0 of 3 baseline answers"},
		{"refused: restarting", func() { s.record(baselineRec(21*time.Second, -1, ledger.DuringLadder)) }, "failed (transport_error/connection_refused)"},
		{"cold start", func() {
			s.record(baselineRec(22*time.Second, 2*time.Second, ledger.DuringLadder))
			s.record(baselineRec(23*time.Second, 40*ms, ""))
		}, "failed (transport_error/connection_refused)"},
		{"refusal out of the last three", func() { s.record(baselineRec(24*time.Second, 60*ms, "")) }, "baseline TTFT 2s above its normal range (up to 150ms)"},
		{"back in range", func() { s.record(baselineRec(25*time.Second, 55*ms, "")) }, ""},
	}
	// check finds, statuspage words: read as the card and the log say it.
	check := func(from time.Duration, baseline bool) string {
		w, latest, flying := s.check(from, limit, baseline)
		return statuspage.SettleWhy(statuspage.LadderSettle{Waiting: w, BaselineTTFT: latest, LadderInFlight: flying, Limit: limit})
	}
	for _, st := range steps {
		st.do()
		why := check(from, true)
		if (st.want == "") != (why == "") || !strings.Contains(why, st.want) {
			t.Errorf("%s: why %q, want %q", st.name, why, st.want)
		}
	}
	if w, _, _ := s.check(from, limit, false); w.Kind != statuspage.Settled {
		t.Errorf("without a baseline: %+v, want settled once the ladder's requests ended", w)
	}
	if why := check(30*time.Second, true); !strings.Contains(why, "0 of 3") {
		t.Errorf("answers planned before the reference point count: %q", why)
	}
	var empty settleWatch
	if l := empty.limit(); l != 0 {
		t.Errorf("no reference: limit %v, want 0", l)
	}
}
