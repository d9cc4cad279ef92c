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

	// BufferedBurstsShare is the several-bursts rule's share: the content
	// of a stream released a buffer at a time spent at most
	// 1/BufferedBurstsShare of the generation time arriving. A buffer's
	// events arrive within the reader's time to take them (~2 ms for 64
	// events here), whatever the server's pace, so the share grows with the
	// server's speed: 0.1 % through nginx in front of a loaded llama.cpp,
	// 6 % in front of an idle one at 0.54 ms a token; a stream read at the
	// server's pace spends 57 % or more arriving, even on a busy host
	// (docs/protocols.md#buffered-streams).
	BufferedBurstsShare = 4

	// BufferedSilenceFloor is the shortest gap between two content events
	// the several-bursts rule calls a silence, whatever the server's pace:
	// longer than a busy host keeps a reader from its socket (measured:
	// docs/protocols.md#buffered-streams).
	BufferedSilenceFloor = 20 * time.Millisecond
	// BufferedSilenceEvents is, in events at the server's pace, the
	// shortest gap the several-bursts rule calls a silence: the server
	// generated at least this many events while nothing arrived.
	BufferedSilenceEvents = 8
	// BufferedMinBurstEvents is the least mean number of content events per
	// burst for the several-bursts rule: a buffer's worth (nginx's 4 or
	// 8 KiB buffers hold 30 to 65 events of ~130 bytes), more than a client
	// that is late to its socket now and then reads at once.
	BufferedMinBurstEvents = 16
)

// BufferedByIntermediary reports whether an ok stream's tokens arrived in
// one burst after a silence, or in a few bursts each all at once, though
// the server generated them over a longer time: an intermediary (a proxy
// with response buffering on, a compressing gateway) held the stream and
// released it at its end or a buffer at a time, so the stream's TTFT is
// its full response time or the time to fill the first buffer.
//
// The one-burst rule: the stream carried at least three token events; the
// server's generation time G is its own (llama.cpp's timings.predicted_ms)
// or, when it gave none, (tokens-1) × BufferedPaceFloor, with tokens the
// server's completion count or, unknown, the token events; G is at least
// BufferedMinGeneration; and from the first token to the end of the stream
// took at most G / BufferedBurstShare. The several-bursts rule
// (releasedInBursts) judges the same stream by its content's gaps. A
// client that is starved of CPU for the whole generation reads the stream
// in bursts too: the verdict is the path's only when the generator is
// valid.
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
	return (end-first)*BufferedBurstShare <= g || releasedInBursts(r, g, events)
}

// releasedInBursts is the several-bursts rule: an intermediary whose
// buffers fill before the stream ends (nginx proxy_buffering on with a
// long stream) releases it a buffer at a time, so its content events
// arrive in a few bursts, each all at once, separated by silences in which
// the server generated a buffer's worth. The rule: the content events'
// gaps (the record's ChunkGaps, all of them kept) split at silences — gaps
// of at least BufferedSilenceEvents events at the server's pace (g over
// the events) and at least BufferedSilenceFloor — into at least two
// bursts of BufferedMinBurstEvents content events on average; and the
// time the content spent arriving (every gap that is no silence, and the
// stream's tail after its last content) is at most a BufferedBurstsShare-th
// of the time the server spent generating it (the pace × the content
// events), at least BufferedMinGeneration. A stream read at the server's
// pace spends its whole generation arriving; one delayed now and then by
// a busy host spends most of it so.
func releasedInBursts(r *ledger.Record, g time.Duration, events int) bool {
	n := r.ContentEvents
	if r.ChunksTruncated || len(r.ChunkGaps) != n-1 || n < 2*BufferedMinBurstEvents {
		return false
	}
	pace := g / time.Duration(events-1)
	gen := pace * time.Duration(n-1)
	if gen < BufferedMinGeneration {
		return false
	}
	silence := max(BufferedSilenceFloor, BufferedSilenceEvents*pace)
	bursts, arriving := 1, time.Duration(0)
	if tail := r.End - r.LastContent; tail > 0 && tail < silence {
		arriving = tail
	}
	for _, gap := range r.ChunkGaps {
		if gap >= silence {
			bursts++
		} else {
			arriving += gap
		}
	}
	return bursts >= 2 && n >= bursts*BufferedMinBurstEvents && arriving*BufferedBurstsShare <= gen
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
