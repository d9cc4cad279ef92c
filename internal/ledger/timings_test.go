package ledger

import (
	"math"
	"testing"
	"time"
)

func TestCheckServerTimings(t *testing.T) {
	good := RawServerTimings{CacheN: 2, PromptN: 31, PromptMS: 3.441, PromptPerTokenMS: 0.111, PredictedN: 32, PredictedMS: 12.4, PredictedPerTokenMS: 0.387}
	bad := ServerTimings{Invalid: true}
	with := func(f func(*RawServerTimings)) RawServerTimings { r := good; f(&r); return r }
	tests := []struct {
		name string
		raw  RawServerTimings
		want ServerTimings
	}{
		{"valid", good, ServerTimings{CacheN: 2, PromptN: 31, PromptMS: 3.441, PromptPerTokenMS: 0.111, PredictedN: 32, PredictedMS: 12.4, PredictedPerTokenMS: 0.387}},
		{"zeros", RawServerTimings{}, ServerTimings{}},
		{"negative ms", with(func(r *RawServerTimings) { r.PredictedPerTokenMS = -0.1 }), bad},
		{"negative count", with(func(r *RawServerTimings) { r.CacheN = -1 }), bad},
		{"NaN", with(func(r *RawServerTimings) { r.PromptMS = math.NaN() }), bad},
		{"Inf", with(func(r *RawServerTimings) { r.PredictedMS = math.Inf(1) }), bad},
		{"NaN count", with(func(r *RawServerTimings) { r.PromptN = math.NaN() }), bad},
		{"fraction of a token", with(func(r *RawServerTimings) { r.PredictedN = 2.5 }), bad},
		{"count too large", with(func(r *RawServerTimings) { r.PromptN = MaxUsageTokens + 1 }), bad},
		{"time too long", with(func(r *RawServerTimings) { r.PromptMS = MaxServerMS + 1 }), bad},
	}
	for _, tt := range tests {
		if got := CheckServerTimings(tt.raw); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestServerGaps: the per-request gaps are the client's figure minus the
// server's, defined only with valid timings and the client's figure.
func TestServerGaps(t *testing.T) {
	ms := time.Millisecond
	base := Record{Planned: 10 * ms, Dispatched: 12 * ms, FirstContent: 20 * ms, LastContent: 29 * ms,
		Usage: Usage{Known: true, Completion: 10}}
	st := &ServerTimings{PromptN: 5, PromptMS: 6.5, PredictedN: 10, PredictedPerTokenMS: 0.75}
	tests := []struct {
		name             string
		rec              Record
		st               *ServerTimings
		prefill, tpot    time.Duration
		okPrefill, okTPO bool
	}{
		{"both", base, st, 8*ms - 6500*time.Microsecond, ms - 750*time.Microsecond, true, true},
		{"no timings", base, nil, 0, 0, false, false},
		{"invalid timings", base, &ServerTimings{Invalid: true}, 0, 0, false, false},
		{"one token", base, &ServerTimings{PromptMS: 1, PredictedN: 1, PredictedPerTokenMS: 2}, 7 * ms, 0, true, false},
		{"no first content", Record{Planned: 10 * ms, Dispatched: 12 * ms}, st, 0, 0, false, false},
	}
	for _, tt := range tests {
		r := tt.rec
		r.ServerTimings = tt.st
		p, okP := r.PrefillGap()
		g, okT := r.TPOTGap()
		if p != tt.prefill || okP != tt.okPrefill || g != tt.tpot || okT != tt.okTPO {
			t.Errorf("%s: prefill gap %v %v, TPOT gap %v %v; want %v %v, %v %v", tt.name, p, okP, g, okT, tt.prefill, tt.okPrefill, tt.tpot, tt.okTPO)
		}
	}
}
