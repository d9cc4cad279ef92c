package report

import (
	"maps"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// Figure names used as keys in JSON reports (and in Boundaries).
const (
	FigTTFT             = "ttft"
	FigTTFTFromDispatch = "ttft_from_dispatch"
	FigTTFR             = "ttfr"
	FigInterChunk       = "inter_chunk"
	FigInterToken       = "inter_token_derived"
	FigTPOT             = "tpot"
	FigE2E              = "e2e"
	FigArrivalTTFT      = "arrival_ttft"
	FigArrivalE2E       = "arrival_e2e"
	FigDispatchLag      = "dispatch_lag"
	FigRejected         = "rejected_response_time"
	FigCensoredAge      = "censored_age"
)

// Boundaries names, for each figure, the two instants it is measured
// between and the cohort it is taken over.
var Boundaries = map[string]string{
	FigTTFT:             "first visible content − planned send; ok requests only",
	FigTTFTFromDispatch: "first visible content − actual dispatch; ok requests only",
	FigTTFR:             "first reasoning content − planned send; ok requests that streamed reasoning",
	FigInterChunk:       "gap between consecutive content events (chunks, not tokens); every gap of ok requests",
	FigInterToken:       "DERIVED: each inter-chunk gap / tokens its chunk carried (per-chunk usage), one sample per token; only when the server reports per-chunk usage",
	FigTPOT:             "(last content − first content) / (completion tokens − 1); ok requests whose usage reported > 1 token",
	FigE2E:              "stream end − planned send; ok requests only (per attempt: a retry from its own planned send)",
	FigArrivalTTFT:      "first visible content − the arrival's first planned send; ok requests only (a retried arrival's failed attempts and backoffs included)",
	FigArrivalE2E:       "stream end − the arrival's first planned send; ok requests only (a retried arrival's failed attempts and backoffs included)",
	FigDispatchLag:      "actual dispatch − planned send; every dispatched request",
	FigRejected:         "rejection (429/503) received − planned send; rejected requests only",
	FigCensoredAge:      "drain deadline − planned send; censored requests: a lower bound, not a latency",
}

// boundariesFor returns the boundaries for a summary: TTFT names the first
// token it measures to.
func boundariesFor(s stats.Summary) map[string]string {
	b := maps.Clone(Boundaries)
	if s.TTFTBoundary == ledger.TTFTAnyToken {
		b[FigTTFT] = "first token of any kind (reasoning or visible content) − planned send; ok requests only"
		b[FigTTFTFromDispatch] = "first token of any kind (reasoning or visible content) − actual dispatch; ok requests only"
		b[FigArrivalTTFT] = "first token of any kind (reasoning or visible content) − the arrival's first planned send; ok requests only (a retried arrival's failed attempts and backoffs included)"
	}
	return b
}
