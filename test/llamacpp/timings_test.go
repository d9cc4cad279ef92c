package llamacpp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// serverTimings is the ledger record's `server_timings` member: llama.cpp's
// own per-request timings, as the record carries them.
type serverTimings struct {
	CacheN              int     `json:"cache_n"`
	PromptN             int     `json:"prompt_n"`
	PromptMS            float64 `json:"prompt_ms"`
	PredictedN          int     `json:"predicted_n"`
	PredictedMS         float64 `json:"predicted_ms"`
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"`
	Invalid             bool    `json:"invalid"`
}

// readServerTimings returns each record's server_timings by record ID
// (records without one are absent).
func readServerTimings(path string) (map[uint64]*serverTimings, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[uint64]*serverTimings{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if line == 1 || len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r struct {
			ID            uint64         `json:"id"`
			ServerTimings *serverTimings `json:"server_timings"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if r.ServerTimings != nil && !r.ServerTimings.Invalid {
			out[r.ID] = r.ServerTimings
		}
	}
	return out, sc.Err()
}
