package telemetry

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// LedgerSinkStats is what a rotating ledger sink reports (ledger.RotatingSink).
type LedgerSinkStats interface {
	Stats() ledger.RotatingStats
}

// ledgerSinkCollector exports a rotating ledger sink's counters at scrape
// time, monotone by construction (monotone).
type ledgerSinkCollector struct {
	s                                      LedgerSinkStats
	written, dropped, writeErrs, rotations *prometheus.Desc
	mono                                   monotone
}

// Describe implements prometheus.Collector.
func (c *ledgerSinkCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.written
	ch <- c.dropped
	ch <- c.writeErrs
	ch <- c.rotations
}

// Collect implements prometheus.Collector.
func (c *ledgerSinkCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.Stats()
	ch <- c.mono.counter(c.written, float64(st.Written))
	ch <- c.mono.counter(c.dropped, float64(st.Dropped))
	ch <- c.mono.counter(c.writeErrs, float64(st.WriteErrors))
	ch <- c.mono.counter(c.rotations, float64(st.Rotations))
}

// NewLedgerSinkCollector returns a collector exporting
// llmprobe_ledger_records_written_total, llmprobe_ledger_records_dropped_total,
// llmprobe_ledger_write_errors_total and llmprobe_ledger_rotations_total
// from s at scrape time. Register it once per sink.
func NewLedgerSinkCollector(s LedgerSinkStats) prometheus.Collector {
	return &ledgerSinkCollector{
		s:         s,
		written:   desc(metricLedgerWritten),
		dropped:   desc(metricLedgerDropped),
		writeErrs: desc(metricLedgerWriteErrs),
		rotations: desc(metricLedgerRotations),
	}
}

// desc is the description of a catalog entry for a collector of constant
// metrics.
func desc(name string) *prometheus.Desc {
	m := spec(name)
	return prometheus.NewDesc(m.Name, m.Help, m.Labels, nil)
}

// WatchLedgerSink registers NewLedgerSinkCollector(s) with reg.
func WatchLedgerSink(reg prometheus.Registerer, s LedgerSinkStats) error {
	if err := reg.Register(NewLedgerSinkCollector(s)); err != nil {
		return fmt.Errorf("telemetry: register ledger sink collector: %w", err)
	}
	return nil
}
