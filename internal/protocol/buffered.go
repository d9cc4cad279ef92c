package protocol

import (
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// The buffered-stream rule's constants (docs/protocols.md#buffered-streams).
const (
	// BufferedPaceFloor is the slowest pace the rule assumes of a server
	// that gave no timings of its own: a stream of n tokens took at least
	// (n-1) × BufferedPaceFloor to generate. 5 ms per token is 200 tokens/s
	// per stream, faster than most single-stream decoding.
	BufferedPaceFloor = 5 * time.Millisecond
	// BufferedMinGeneration is the least generation time (by the server's
	// timings, or by the pace floor) a stream must have taken to be judged:
	// a shorter one arrives in one read through any path.
	BufferedMinGeneration = 100 * time.Millisecond
	// BufferedBurstShare is the share of the generation time within which
	// all of a buffered stream's tokens arrived: 1/BufferedBurstShare.
	BufferedBurstShare = 20
	// bufferedMinEvents is the least number of token-carrying events a
	// stream needs to be judged: one or two events say nothing of a burst.
	bufferedMinEvents = 3
)

// BufferedByIntermediary reports whether an ok stream's tokens all arrived
// in one burst after a silence though the server generated them over a
// longer time: an intermediary (a proxy with response buffering on, a
// compressing gateway) held the stream and released it at its end, so the
// stream's TTFT is its full response time.
//
// The rule: the stream carried at least three token events; the server's
// generation time G is its own (llama.cpp's timings.predicted_ms) or, when
// it gave none, (tokens-1) × BufferedPaceFloor, with tokens the server's
// completion count or, unknown, the token events; G is at least
// BufferedMinGeneration; and from the first token to the end of the stream
// took at most G / BufferedBurstShare. A client that is starved of CPU for
// the whole generation reads the stream in one burst too: the verdict is
// the path's only when the generator is valid.
func BufferedByIntermediary(r *ledger.Record) bool {
	return r.Outcome == ledger.OK && bufferedStream(r)
}

// bufferedStream is the rule on a stream that ended ok (the Client calls
// it before the record's outcome is set).
func bufferedStream(r *ledger.Record) bool {
	if r.End == 0 {
		return false
	}
	events := r.ContentEvents + r.ReasoningEvents
	if events < bufferedMinEvents {
		return false
	}
	first := r.FirstContent
	if r.FirstReasoning != 0 && (first == 0 || r.FirstReasoning < first) {
		first = r.FirstReasoning
	}
	end := max(r.End, r.LastContent)
	if first == 0 || end < first {
		return false
	}
	g := generationTime(r, events)
	if g < BufferedMinGeneration {
		return false
	}
	return (end-first)*BufferedBurstShare <= g
}

// generationTime is how long the server took to generate the stream's
// tokens: its own account when it gave a believable one, else the pace
// floor's lower bound.
func generationTime(r *ledger.Record, events int) time.Duration {
	if st := r.ServerTimings; st != nil && !st.Invalid && st.PredictedMS > 0 {
		return time.Duration(st.PredictedMS * float64(time.Millisecond))
	}
	tokens := events
	if r.Usage.Known && r.Usage.Completion > 0 {
		tokens = r.Usage.Completion
	}
	return time.Duration(tokens-1) * BufferedPaceFloor
}
