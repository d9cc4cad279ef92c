package telemetry

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// With a region, every llmprobe_* series carries it as a label.
func TestRegionLabel(t *testing.T) {
	r, err := New(Options{Region: "eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	r.Record(&ledger.Record{ID: 1, Traffic: ledger.TrafficBaseline, Target: "t", Class: "c", Planned: ms,
		Dispatched: 2 * ms, FirstContent: 10 * ms, LastContent: 20 * ms, End: 21 * ms, Outcome: ledger.OK, Reason: ledger.ReasonStop})
	fams, err := r.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), "llmprobe_") {
			continue
		}
		for _, m := range f.GetMetric() {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == "region" && l.GetValue() == "eu-west-1" {
					found = true
				}
			}
			if !found {
				t.Fatalf("%s: a series without region=eu-west-1: %v", f.GetName(), m.GetLabel())
			}
			seen++
		}
	}
	if seen == 0 {
		t.Fatal("no llmprobe_ series gathered")
	}
	if n, err := testutil.GatherAndCount(r.Registry(), "llmprobe_requests_total"); err != nil || n == 0 {
		t.Fatalf("requests_total: %d series, %v", n, err)
	}
}
