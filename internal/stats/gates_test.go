package stats

import (
	"encoding/json"
	"testing"
	"time"
)

// TestGatesJSON: gates write themselves as duration text, and read text
// or a legacy result's nanoseconds; a malformed or negative gate is
// refused.
func TestGatesJSON(t *testing.T) {
	g := Gates{TTFT: 250 * time.Millisecond, E2E: 90 * time.Second}
	b, err := json.Marshal(g)
	if err != nil || string(b) != `{"ttft":"250ms","tpot":"0s","e2e":"1m30s"}` {
		t.Fatalf("%s (%v)", b, err)
	}
	for _, c := range []struct {
		in   string
		want Gates
		ok   bool
	}{
		{string(b), g, true},
		{`{"ttft":250000000,"e2e":90000000000}`, g, true}, // a legacy ladder result
		{`{}`, Gates{}, true},
		{`{"tpot":null}`, Gates{}, true},
		{`{"ttft":"10q"}`, Gates{}, false},
		{`{"ttft":"-1s"}`, Gates{}, false},
		{`{"ttft":-5}`, Gates{}, false},
		{`{"ttft":true}`, Gates{}, false},
	} {
		var got Gates
		err := json.Unmarshal([]byte(c.in), &got)
		if c.ok != (err == nil) || (c.ok && got != c.want) {
			t.Errorf("%s: %+v, %v", c.in, got, err)
		}
	}
}
