package stats

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

func TestSummaryCountsBufferedStreams(t *testing.T) {
	ms := time.Millisecond
	rec := func(id uint64, o ledger.Outcome, r ledger.Reason, buffered bool) ledger.Record {
		return ledger.Record{ID: id, Planned: ms, Dispatched: 2 * ms, FirstContent: 700 * ms, LastContent: 701 * ms, End: 701 * ms,
			ContentEvents: 32, Outcome: o, Reason: r, BufferedByIntermediary: buffered}
	}
	recs := []ledger.Record{
		rec(1, ledger.OK, ledger.ReasonStop, true),
		rec(2, ledger.OK, ledger.ReasonStop, false),
		rec(3, ledger.OK, ledger.ReasonStop, true),
		rec(4, ledger.StreamError, ledger.ReasonTruncated, true), // only ok streams are judged
	}
	if got := Summarize(Config{Mode: ledger.ModeOpen}, recs).Buffered; got != 2 {
		t.Errorf("Buffered = %d, want 2", got)
	}
}
