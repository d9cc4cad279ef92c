package report

import (
	"fmt"

	"github.com/llmprobe/llmprobe/internal/servermetrics"
)

// ServerHeads are the server table's running and waiting column heads for
// the steps' flavour: llama.cpp's running requests are its busy slots
// (shown busy/idle) and its waiting ones its deferred requests.
func ServerHeads(steps []ServerStep) (running, waiting string) {
	for _, s := range steps {
		if s.View != nil && !s.View.Unavailable && s.View.Flavour == servermetrics.LlamaCPP {
			return "slots busy/idle", "deferred start→max"
		}
	}
	return "running max", "waiting start→max"
}

// missingRole reports whether a view lists a known role among what the
// server did not expose ("kv_cache (llamacpp:kv_cache_usage_ratio)").
func missingRole(v *servermetrics.View, r servermetrics.Role) bool {
	prefix := fmt.Sprintf("%s (", r)
	for _, m := range v.Missing {
		if len(m) > len(prefix) && m[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}

// ServerCells are a view's running, waiting and KV-cache cells as the
// ladder's server table prints them ("64", "0→37", "98 %"; for llama.cpp
// "4/0" busy/idle slots, "0→4" deferred, "n/a" for its KV cache), "-"
// without a figure.
func ServerCells(v *servermetrics.View) (running, waiting, kv string) {
	return gaugeCell(v, servermetrics.Running, false), gaugeCell(v, servermetrics.Waiting, false), gaugeCell(v, servermetrics.KVCache, true)
}
