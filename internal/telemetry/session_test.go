package telemetry

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestSessionTurnSeries: a session's turns reach the per-turn series
// through Record, by turn and outcome; records outside sessions do not,
// and a turn above the bound is a counted drop, never a new label value.
func TestSessionTurnSeries(t *testing.T) {
	r, _ := newTestRecorder(t, Options{})
	for _, rec := range sessionFixture() {
		r.Record(rec)
	}
	plain := *sessionFixture()[0]
	plain.Turn, plain.Session, plain.ID = 0, 0, 99
	r.Record(&plain)
	over := *sessionFixture()[0]
	over.Turn, over.ID = MaxTurnLabel+1, 100
	r.Record(&over)
	for _, tc := range []struct {
		turn, outcome string
		want          float64
	}{{"1", "ok", 1}, {"2", "http_error", 1}, {"3", "unsent", 1}, {"1", "http_error", 0}} {
		if got := testutil.ToFloat64(r.prom.turns.WithLabelValues("sim", "chat", tc.turn, tc.outcome)); got != tc.want {
			t.Errorf("turn %s %s: %v, want %v", tc.turn, tc.outcome, got, tc.want)
		}
	}
	if n := testutil.CollectAndCount(r.prom.turns); n != 4 { // the three above + the zero read
		t.Errorf("%d turn series, want 4", n)
	}
	if n := testutil.CollectAndCount(r.prom.turnTTFT); n != 1 {
		t.Errorf("%d turn TTFT series, want 1 (turn 1, the one ok)", n)
	}
	if got := testutil.ToFloat64(r.prom.dropped.WithLabelValues(DropLabel)); got != 1 {
		t.Errorf("dropped %v, want 1 (the turn above %d)", got, MaxTurnLabel)
	}
}
