package telemetry

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

type fakeSinkStats ledger.RotatingStats

func (f *fakeSinkStats) Stats() ledger.RotatingStats { return ledger.RotatingStats(*f) }

func TestLedgerSinkCollector(t *testing.T) {
	st := &fakeSinkStats{Written: 10, Dropped: 2, WriteErrors: 1, Rotations: 3}
	reg := prometheus.NewRegistry()
	if err := WatchLedgerSink(reg, st); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP llmprobe_ledger_records_dropped_total Ledger records not written (queue full, write error, after close).
# TYPE llmprobe_ledger_records_dropped_total counter
llmprobe_ledger_records_dropped_total 2
# HELP llmprobe_ledger_write_errors_total Failed writes, flushes, opens or rotations of the JSONL ledger.
# TYPE llmprobe_ledger_write_errors_total counter
llmprobe_ledger_write_errors_total 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "llmprobe_ledger_records_dropped_total", "llmprobe_ledger_write_errors_total"); err != nil {
		t.Error(err)
	}
	st.Dropped = 5 // read at scrape time
	if n, err := testutil.GatherAndCount(reg, "llmprobe_ledger_records_dropped_total"); err != nil || n != 1 {
		t.Fatalf("count = %d, %v", n, err)
	}
	mf := family(t, reg, "llmprobe_ledger_records_dropped_total")
	if got := mf.GetMetric()[0].GetCounter().GetValue(); got != 5 {
		t.Errorf("dropped after change = %v, want 5", got)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}
