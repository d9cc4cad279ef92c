package stats

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// A retried arrival is one unit of demand however many attempts it took.
func TestRetriesAreNotDemand(t *testing.T) {
	ms := time.Millisecond
	recs := []ledger.Record{
		{ID: 1, Mode: ledger.ModeOpen, Planned: 10 * ms, Dispatched: 11 * ms, End: 20 * ms, Outcome: ledger.Rejected, Reason: ledger.ReasonStatus429, Attempt: 1},
		{ID: 2, Mode: ledger.ModeOpen, Planned: 120 * ms, Dispatched: 121 * ms, FirstContent: 150 * ms, LastContent: 160 * ms, End: 170 * ms, Outcome: ledger.OK, Reason: ledger.ReasonStop, Attempt: 2},
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
