package ledger

import (
	"encoding/json"
	"math"
	"time"
)

// ServerTimings is a server's own per-request account of its work, as
// llama.cpp sends it in a stream's last chunk (`timings`): tokens and
// milliseconds of prompt processing and of generation. Checked once, as
// decoded (CheckServerTimings): a report that cannot be true is kept only
// as Invalid, never as figures.
type ServerTimings struct {
	CacheN              int     `json:"cache_n"`                // prompt tokens taken from the prompt cache
	PromptN             int     `json:"prompt_n"`               // prompt tokens computed
	PromptMS            float64 `json:"prompt_ms"`              // time to process the prompt (prefill)
	PromptPerTokenMS    float64 `json:"prompt_per_token_ms"`    // PromptMS / PromptN
	PredictedN          int     `json:"predicted_n"`            // tokens generated
	PredictedMS         float64 `json:"predicted_ms"`           // time generating them
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"` // PredictedMS / PredictedN: the server's TPOT
	// Invalid says the server's timings held a value that cannot be true
	// (negative, not a number, a count above MaxUsageTokens or a time above
	// MaxServerMS, or not a JSON number): the figures were dropped.
	Invalid bool `json:"invalid,omitempty"`
}

// serverTimingsJSON is ServerTimings without its methods: the encoding
// of a valid report.
type serverTimingsJSON ServerTimings

// invalidServerTimings is an Invalid report's whole encoding: the flag
// alone, no figures (a zero written beside it would read as a server that
// reported 0 ms).
var invalidServerTimings = []byte(`{"invalid":true}`)

// MarshalJSON implements json.Marshaler: the figures of a valid report,
// only `{"invalid":true}` for a refused one.
func (t ServerTimings) MarshalJSON() ([]byte, error) {
	if t.Invalid {
		return invalidServerTimings, nil
	}
	return json.Marshal(serverTimingsJSON(t))
}

// UnmarshalJSON implements json.Unmarshaler: a report read back flagged
// invalid keeps no figures, whatever the line beside the flag holds.
func (t *ServerTimings) UnmarshalJSON(b []byte) error {
	var v serverTimingsJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v.Invalid {
		v = serverTimingsJSON{Invalid: true}
	}
	*t = ServerTimings(v)
	return nil
}

// MaxServerMS is the largest server time believed for one request: a day.
const MaxServerMS = 24 * 60 * 60 * 1000

// RawServerTimings is a server's timings as decoded, unchecked: counts
// are floats so that a fraction or an out-of-range value is seen, not
// rounded or overflowed.
type RawServerTimings struct {
	CacheN              float64 `json:"cache_n"`
	PromptN             float64 `json:"prompt_n"`
	PromptMS            float64 `json:"prompt_ms"`
	PromptPerTokenMS    float64 `json:"prompt_per_token_ms"`
	PredictedN          float64 `json:"predicted_n"`
	PredictedMS         float64 `json:"predicted_ms"`
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"`
}

// CheckServerTimings is how a server's timings become a ServerTimings:
// every count a whole number in 0..MaxUsageTokens, every time in
// 0..MaxServerMS, or the result is Invalid with no figures.
func CheckServerTimings(r RawServerTimings) ServerTimings {
	for _, n := range []float64{r.CacheN, r.PromptN, r.PredictedN} {
		if !(n >= 0 && n <= MaxUsageTokens) || n != math.Trunc(n) {
			return ServerTimings{Invalid: true}
		}
	}
	for _, ms := range []float64{r.PromptMS, r.PromptPerTokenMS, r.PredictedMS, r.PredictedPerTokenMS} {
		if !(ms >= 0 && ms <= MaxServerMS) {
			return ServerTimings{Invalid: true}
		}
	}
	return ServerTimings{
		CacheN: int(r.CacheN), PromptN: int(r.PromptN), PromptMS: r.PromptMS, PromptPerTokenMS: r.PromptPerTokenMS,
		PredictedN: int(r.PredictedN), PredictedMS: r.PredictedMS, PredictedPerTokenMS: r.PredictedPerTokenMS,
	}
}

// msDuration converts server milliseconds to a Duration (rounded to the
// nanosecond).
func msDuration(ms float64) time.Duration { return time.Duration(math.Round(ms * 1e6)) }

// PrefillGap is the client's TTFT from dispatch minus the server's prompt
// time: what the network, queueing in the server before its prompt
// processing, and the first token's own generation add to the server's
// prefill. Defined when both sides are known.
func (r *Record) PrefillGap() (time.Duration, bool) {
	st := r.ServerTimings
	ttft, ok := r.TTFTFromDispatch()
	if st == nil || st.Invalid || !ok {
		return 0, false
	}
	return ttft - msDuration(st.PromptMS), true
}

// TPOTGap is the client's TPOT minus the server's time per generated token
// (predicted_per_token_ms): what delivery adds to (or, when negative,
// hides of) the server's pace. Defined when both sides are known and the
// server generated at least two tokens.
func (r *Record) TPOTGap() (time.Duration, bool) {
	st := r.ServerTimings
	tpot, ok := r.TPOT()
	if st == nil || st.Invalid || !ok || st.PredictedN < 2 {
		return 0, false
	}
	return tpot - msDuration(st.PredictedPerTokenMS), true
}
