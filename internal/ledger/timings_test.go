package ledger

import (
	"encoding/json"
	"math"
	"strings"
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

// TestServerTimingsJSON: a refused report is written as the flag alone,
// never as zero figures (which would read as a server that reported 0 ms),
// and read back without figures; a valid report keeps its zeros.
func TestServerTimingsJSON(t *testing.T) {
	tests := []struct {
		name string
		st   ServerTimings
		want string
	}{
		{"invalid", ServerTimings{Invalid: true}, `{"invalid":true}`},
		{"invalid with figures left", ServerTimings{PromptMS: 3, Invalid: true}, `{"invalid":true}`},
		{"valid zeros", ServerTimings{}, `{"cache_n":0,"prompt_n":0,"prompt_ms":0,"prompt_per_token_ms":0,"predicted_n":0,"predicted_ms":0,"predicted_per_token_ms":0}`},
		{"valid", ServerTimings{PromptN: 3, PredictedPerTokenMS: 0.5}, `{"cache_n":0,"prompt_n":3,"prompt_ms":0,"prompt_per_token_ms":0,"predicted_n":0,"predicted_ms":0,"predicted_per_token_ms":0.5}`},
	}
	for _, tt := range tests {
		rec := Record{ServerTimings: &tt.st}
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if want := `"server_timings":` + tt.want; !strings.Contains(string(b), want) {
			t.Errorf("%s: %s, want it to hold %s", tt.name, b, want)
		}
		var back Record
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: reading back: %v", tt.name, err)
		}
		want := tt.st
		if want.Invalid {
			want = ServerTimings{Invalid: true}
		}
		if back.ServerTimings == nil || *back.ServerTimings != want {
			t.Errorf("%s: read back %+v, want %+v", tt.name, back.ServerTimings, want)
		}
	}
	var st ServerTimings
	if err := json.Unmarshal([]byte(`{"prompt_ms":7,"invalid":true}`), &st); err != nil || st != (ServerTimings{Invalid: true}) {
		t.Errorf("a line flagged invalid with figures read back as %+v (%v), want the flag alone", st, err)
	}
}
