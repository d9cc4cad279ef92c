package stats

import "github.com/llmprobe/llmprobe/internal/ledger"

// Outcomes counts terminal outcomes, and reasons within each outcome.
type Outcomes struct {
	ByOutcome map[ledger.Outcome]int
	ByReason  map[ledger.Outcome]map[ledger.Reason]int
}

// GateMisses counts ok records that failed a gate (a record can miss
// several). Unverifiable counts ok records whose TPOT gate could not be
// checked because the server reported no usage (skipped: they can be good).
type GateMisses struct {
	TTFT         int
	TPOT         int
	E2E          int
	Unverifiable int
}
