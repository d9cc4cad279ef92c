package telemetry

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestConfigReload: the last reload's outcome is 1 or 0; the timestamp is
// the last successful one's, kept through a failure; region is a constant
// label as on the Recorder's series.
func TestConfigReload(t *testing.T) {
	reg := prometheus.NewRegistry()
	cr, err := NewConfigReload(reg, "eu-west")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1700000000, 500e6)
	steps := []struct {
		ok     bool
		at     time.Time
		wantOK float64
		wantTS float64
	}{
		{true, t0, 1, 1700000000.5},
		{false, t0.Add(time.Minute), 0, 1700000000.5},
		{true, t0.Add(2 * time.Minute), 1, 1700000120.5},
	}
	for i, s := range steps {
		cr.Set(s.ok, s.at)
		if got := testutil.ToFloat64(cr.ok); got != s.wantOK {
			t.Errorf("step %d: successful %g, want %g", i, got, s.wantOK)
		}
		if got := testutil.ToFloat64(cr.ts); got != s.wantTS {
			t.Errorf("step %d: timestamp %g, want %g", i, got, s.wantTS)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if l := mf.GetMetric()[0].GetLabel(); len(l) != 1 || l[0].GetName() != "region" || l[0].GetValue() != "eu-west" {
			t.Errorf("%s: labels %v, want region=eu-west", mf.GetName(), l)
		}
	}
}
