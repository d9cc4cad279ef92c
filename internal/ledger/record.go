package ledger

import (
	"fmt"
	"time"
)

// Traffic is the kind of traffic a request belongs to. Bounded set.
type Traffic string

// Traffic kinds.
const (
	TrafficProbe    Traffic = "probe"    // one-shot `llmprobe probe`, and the daemon's /probe endpoint
	TrafficBaseline Traffic = "baseline" // the daemon's continuous low-rate stream
	TrafficLadder   Traffic = "ladder"   // a rate-ladder step
)

// During says what else was running against the target when a request was
// planned. Bounded set; it is a metric label (never empty there: a record
// with no value is exported as DuringNone).
type During string

// During values.
const (
	// DuringNone: nothing of llmprobe's own was loading the target.
	DuringNone During = "none"
	// DuringLadder: a rate ladder was running against the target (or had
	// ended less than its settle time before). Ladder requests always carry
	// it; baseline requests carry it only then, and are kept out of the SLO
	// figures: the ladder's own load, not the service, decided their fate.
	DuringLadder During = "ladder"
)

// DuringValues is the closed set of During values, in a stable order.
var DuringValues = []During{DuringNone, DuringLadder}

// Label is the metric label value: DuringNone for an unset value.
func (d During) Label() string {
	if d == "" {
		return string(DuringNone)
	}
	return string(d)
}

// DuringLabel is the record's `during` metric label: "ladder" for ladder
// traffic whatever its field says, else During.Label().
func (r *Record) DuringLabel() string {
	if r.Traffic == TrafficLadder {
		return string(DuringLadder)
	}
	return r.During.Label()
}

// Mode is the load model a request was generated under.
type Mode string

// Load models.
const (
	ModeOpen   Mode = "open"   // arrivals from a fixed schedule (no coordinated omission)
	ModeClosed Mode = "closed" // N users with think time: labelled closed loop everywhere
)

// Usage is the server's own token accounting, when it reported any.
type Usage struct {
	Known      bool `json:"known"`                       // false: the server gave no usage; counts are unknown, not zero
	Prompt     int  `json:"prompt_tokens,omitempty"`     // input tokens
	Completion int  `json:"completion_tokens,omitempty"` // output tokens (visible + reasoning where the API counts both)
	Reasoning  int  `json:"reasoning_tokens,omitempty"`  // reasoning tokens, where reported
	// CachedPrompt is how many of the Prompt tokens the server says it read
	// from its prompt (prefix) cache: OpenAI's
	// prompt_tokens_details.cached_tokens (Responses: input_tokens_details),
	// Anthropic's cache_read_input_tokens. Unknown (absent in JSON) when the
	// server did not say, which is not 0. See Record.CachedPromptTokens.
	CachedPrompt Count `json:"cached_prompt_tokens,omitzero"`
	// CacheWrite is how many prompt tokens the server says it wrote to its
	// cache (Anthropic's cache_creation_input_tokens); unknown when not said.
	CacheWrite Count `json:"cache_write_tokens,omitzero"`
	// CacheInvalid says a cache count could not be true (negative, above
	// MaxUsageTokens, or more than the prompt tokens): it was dropped and is
	// unknown; the other counts stand (see Usage.WithCache).
	CacheInvalid bool `json:"cache_invalid,omitempty"`
	// Invalid says the server reported a count that cannot be true (negative,
	// or above MaxUsageTokens): it was dropped, so the counts are unknown
	// (Known false) unless a later report in the stream was believable.
	Invalid bool `json:"invalid,omitempty"`
}

// MaxUsageTokens is the largest token count believed from a server for one
// request (each of prompt, completion and reasoning): ten times the largest
// context window of any model today. A count above it is absurd.
const MaxUsageTokens = 100_000_000

// CheckUsage is how a server's token counts become a Usage, checked once, as
// they are decoded: when any count is negative or above MaxUsageTokens the
// counts are unknown (Known false) and flagged Invalid, never a figure that
// reaches a budget, a counter or a report.
func CheckUsage(prompt, completion, reasoning int64) Usage {
	for _, n := range []int64{prompt, completion, reasoning} {
		if n < 0 || n > MaxUsageTokens {
			return Usage{Invalid: true}
		}
	}
	return Usage{Known: true, Prompt: int(prompt), Completion: int(completion), Reasoning: int(reasoning)}
}

// Record is one planned arrival and everything measured about it.
//
// Every time is an offset from the run's epoch (see RunHeader). Planned is
// always set; the others are zero when the boundary was never reached (the
// clock given to the ledger never returns an offset below 1ns after the
// epoch, so zero is unambiguous).
type Record struct {
	ID      uint64  `json:"id"`
	Traffic Traffic `json:"traffic"`
	Mode    Mode    `json:"mode"`
	Target  string  `json:"target"`
	Class   string  `json:"class"`
	API     string  `json:"api,omitempty"`
	Step    int     `json:"step,omitempty"` // ladder step (1-based), 0 outside ladders
	// During is "ladder" when the request was planned while a ladder ran
	// against its target (or within the ladder's settle time after it);
	// absent otherwise. A retry inherits its first attempt's value.
	During  During `json:"during,omitempty"`
	Attempt int    `json:"attempt,omitempty"` // retry attempt (1-based) when retries are on, 0 otherwise
	User    int    `json:"user,omitempty"`    // closed-loop user (1-based), 0 in open loop
	// RetryOf is the ID of the attempt this record repeats (the one just
	// before it in its arrival's chain); 0 for a first attempt.
	RetryOf uint64 `json:"retry_of,omitempty"`
	// FirstPlanned is, on a retry, the planned offset of its arrival's first
	// attempt; 0 on a first attempt (whose own Planned is that time). See
	// ArrivalPlanned.
	FirstPlanned time.Duration `json:"first_planned_ns,omitempty"`
	// Session is, on a turn of a multi-turn session, the session's ID: the
	// ID of its first turn's record (so unique in the ledger); Turn is the
	// turn's 1-based index. Both are 0 outside sessions. Every turn of a
	// session is a planned arrival of its own (docs/ledger.md#session-records).
	Session uint64 `json:"session,omitempty"`
	Turn    int    `json:"turn,omitempty"`
	// SessionPlanned is, on a session's turn 2 or later, the planned offset
	// of its session's first turn (the session's arrival); 0 otherwise. A
	// turn belongs to the window its session started in (CohortPlanned),
	// and the session's end-to-end runs from it.
	SessionPlanned time.Duration `json:"session_planned_ns,omitempty"`

	Planned        time.Duration   `json:"planned_ns"`                   // when the schedule said to send
	Dispatched     time.Duration   `json:"dispatched_ns,omitempty"`      // when the request was handed to the transport
	Headers        time.Duration   `json:"headers_ns,omitempty"`         // response headers received
	FirstByte      time.Duration   `json:"first_byte_ns,omitempty"`      // first body byte read
	FirstReasoning time.Duration   `json:"first_reasoning_ns,omitempty"` // first non-empty reasoning delta
	FirstContent   time.Duration   `json:"first_content_ns,omitempty"`   // first non-empty visible content delta
	LastContent    time.Duration   `json:"last_content_ns,omitempty"`    // last non-empty content delta
	End            time.Duration   `json:"end_ns,omitempty"`             // terminal: stream end, error, cancel or censor time
	ChunkGaps      []time.Duration `json:"chunk_gaps_ns,omitempty"`      // each gap between consecutive content events
	// ChunkTokens is, per content event, the output tokens it carried as
	// known from per-chunk usage deltas (0 = unknown); nil when the server
	// gave no per-chunk usage. Chunks are not tokens: this is how a bundled
	// chunk is told apart.
	ChunkTokens []int `json:"chunk_tokens,omitempty"`
	// ChunksTruncated says ChunkGaps/ChunkTokens stopped at the client's
	// per-request bound (protocol.MaxChunkGaps); ContentEvents still counts
	// every event.
	ChunksTruncated bool `json:"chunks_truncated,omitempty"`
	// TTFTBoundary is which first token TTFT means for this record: visible
	// content (the default) or the first token of any kind (reasoning
	// included). Both stamps are always kept.
	TTFTBoundary TTFTBoundary `json:"ttft_boundary,omitempty"`

	Status     int           `json:"status,omitempty"`         // HTTP status
	RetryAfter time.Duration `json:"retry_after_ns,omitempty"` // parsed Retry-After on a rejection (at most an hour)
	// RetryAfterClamped says the server's Retry-After asked for longer than
	// the bound (protocol.MaxRetryAfter) and RetryAfter holds the bound.
	RetryAfterClamped bool   `json:"retry_after_clamped,omitempty"`
	Usage             Usage  `json:"usage"`
	ContentEvents     int    `json:"content_events"`             // events that carried visible content
	ReasoningEvents   int    `json:"reasoning_events,omitempty"` // events that carried reasoning
	FinishReason      string `json:"finish_reason,omitempty"`    // the server's finish reason, cleaned (sanitize) to MaxFinishReasonBytes
	Model             string `json:"model,omitempty"`            // the model the server says answered, cleaned (sanitize) to MaxModelBytes
	TraceID           string `json:"trace_id,omitempty"`
	// Replays is how many times the transport sent the request again on
	// another connection because a reused keep-alive connection failed
	// before any response byte, as a keep-alive race (ReplayReason
	// stale_connection; see docs/protocols.md). Replayed is when the
	// last replay took its connection. The record's times still run from
	// its one Planned and Dispatched: the replay's cost is in its latency.
	Replays      int           `json:"replays,omitempty"`
	ReplayReason Reason        `json:"replay_reason,omitempty"`
	Replayed     time.Duration `json:"replayed_ns,omitempty"`
	// ServerTimings is the server's own account of the request's prompt
	// processing and generation (llama.cpp's `timings`), when its stream
	// carried one; nil otherwise.
	ServerTimings *ServerTimings `json:"server_timings,omitempty"`
	// Conn is how the attempt had its connection and sent its request:
	// reused or new, the new one's resolve, connect and TLS phases, the
	// request's write, the HTTP and TLS versions (Conn). Absent when the
	// request never reached a connection.
	Conn *Conn `json:"conn,omitempty"`
	// BufferedByIntermediary says the stream's tokens arrived in one burst,
	// or a few bursts each at once, though the server generated them over a
	// longer time: something between the prober and the server held the
	// stream (protocol's BufferedByIntermediary rules), so its TTFT is the
	// full response time or the time to fill the first buffer.
	BufferedByIntermediary bool `json:"buffered_by_intermediary,omitempty"`
	// Cert is the server's certificates' expiry, on a request over TLS
	// (CertFacts); nil over plain HTTP.
	Cert *CertFacts `json:"cert,omitempty"`
	// Check is the answer canary this request ran, with its result; nil on
	// an ordinary request. A check request that did not end ok is
	// not_judged.
	Check *CheckRecord `json:"check,omitempty"`

	Outcome Outcome `json:"outcome"`
	Reason  Reason  `json:"reason"`
	Error   string  `json:"error,omitempty"` // a short, sanitised description: never a URL, key, prompt or body (MaxErrorBytes)
}

// Bounds on the record's text fields, cleaned by the one rule (sanitize):
// valid UTF-8, printable, cut at a rune boundary.
const (
	MaxModelBytes        = 128
	MaxFinishReasonBytes = 64
	MaxErrorBytes        = 160
)

// Sent reports whether the request was dispatched.
func (r *Record) Sent() bool { return r.Dispatched > 0 }

// IsRetry reports whether the record is a retry (a second or later attempt).
func (r *Record) IsRetry() bool { return r.Attempt > 1 || r.RetryOf != 0 }

// ArrivalPlanned is when the schedule planned the arrival this attempt
// belongs to: FirstPlanned on a retry, Planned otherwise. Cohort (window)
// membership and user-experienced (arrival) latencies are taken from it, so
// that waiting through failed attempts and backoffs is never hidden.
func (r *Record) ArrivalPlanned() time.Duration {
	if r.FirstPlanned > 0 {
		return r.FirstPlanned
	}
	return r.Planned
}

// CohortPlanned is the planned time that decides which window a record
// belongs to: its session's arrival for a session's later turn, else
// ArrivalPlanned.
func (r *Record) CohortPlanned() time.Duration {
	if r.SessionPlanned > 0 {
		return r.SessionPlanned
	}
	return r.ArrivalPlanned()
}

// LaterTurn reports whether the record is a session's turn 2 or later:
// planned by its session's progress, not by the open-loop schedule.
func (r *Record) LaterTurn() bool { return r.Turn > 1 }

// ArrivalE2E is end minus the arrival's first planned time: the latency the
// user of a retried arrival saw, all failed attempts and backoffs included.
// It equals E2E on a first attempt.
func (r *Record) ArrivalE2E() (time.Duration, bool) {
	if r.End == 0 || r.Dispatched == 0 {
		return 0, false
	}
	return r.End - r.ArrivalPlanned(), true
}

// ArrivalTTFT is the first token (same boundary as TTFT) minus the arrival's
// first planned time. It equals TTFT on a first attempt.
func (r *Record) ArrivalTTFT() (time.Duration, bool) {
	ft := r.FirstToken()
	if ft == 0 {
		return 0, false
	}
	return ft - r.ArrivalPlanned(), true
}

// Admitted reports whether the target took the request: it was sent, and
// either a response other than a rejection (429/503) arrived, or the
// request failed or was stopped after the connection was made. Not admitted:
// unsent, rejected, transport errors before response headers (refused,
// reset, TLS, DNS) and connect timeouts. Other timeouts, cancellations and
// censored requests count as admitted: no refusal was seen (the headers,
// first-content and total timers run from dispatch, so one of them firing
// while a connection was still being made is, rarely, counted admitted).
func (r *Record) Admitted() bool {
	if !r.Sent() {
		return false
	}
	switch r.Outcome {
	case Unsent, Rejected:
		return false
	case TransportError:
		return r.Headers != 0
	case Timeout:
		return r.Reason != ReasonConnect
	}
	return true
}

// Age is how long a request had been outstanding at its end, from its planned
// time. For a censored request it is a lower bound on its latency, never a
// latency sample.
func (r *Record) Age() time.Duration {
	if r.End == 0 {
		return 0
	}
	return r.End - r.Planned
}

// TTFTBoundary says which first token "time to first token" measures to.
type TTFTBoundary string

// TTFT boundaries.
const (
	TTFTContent  TTFTBoundary = ""          // first visible content (default; reasoning does not count)
	TTFTAnyToken TTFTBoundary = "any_token" // first token of any kind: reasoning or visible content
)

// ParseTTFTBoundary parses "content" (or "") and "any_token".
func ParseTTFTBoundary(s string) (TTFTBoundary, error) {
	switch s {
	case "", "content":
		return TTFTContent, nil
	case string(TTFTAnyToken):
		return TTFTAnyToken, nil
	}
	return "", fmt.Errorf("unknown TTFT boundary %q (want content or any_token)", s)
}

// UnmarshalText reads a boundary as configuration writes it (ttft_boundary,
// --ttft-boundary) and as a record stores it: "content" (or "") and
// "any_token". It is the boundary's one parser: config, the flags and the
// records' JSON all read it here.
func (b *TTFTBoundary) UnmarshalText(t []byte) error {
	v, err := ParseTTFTBoundary(string(t))
	if err != nil {
		return fmt.Errorf("want content or any_token, got %q", string(t))
	}
	*b = v
	return nil
}

// MarshalText writes the boundary as configuration does: "content" for
// the default. (A record omits the default: its field is omitempty.)
func (b TTFTBoundary) MarshalText() ([]byte, error) {
	if b == TTFTContent {
		return []byte("content"), nil
	}
	return []byte(b), nil
}

// Valid reports whether b is a boundary: one read by UnmarshalText always
// is; one set in code is checked by it.
func (b TTFTBoundary) Valid() bool { return b == TTFTContent || b == TTFTAnyToken }

// FirstToken is the offset of the first token under the record's TTFT
// boundary (0 when none arrived).
func (r *Record) FirstToken() time.Duration {
	if r.TTFTBoundary == TTFTAnyToken && r.FirstReasoning != 0 && (r.FirstContent == 0 || r.FirstReasoning < r.FirstContent) {
		return r.FirstReasoning
	}
	return r.FirstContent
}

// TTFT is the time to first token from the planned time, and whether it is
// defined. The first token is visible content unless the record's
// TTFTBoundary says any token.
func (r *Record) TTFT() (time.Duration, bool) {
	ft := r.FirstToken()
	if ft == 0 {
		return 0, false
	}
	return ft - r.Planned, true
}

// TTFTFromDispatch is time to first token (same boundary) from dispatch.
func (r *Record) TTFTFromDispatch() (time.Duration, bool) {
	ft := r.FirstToken()
	if ft == 0 || r.Dispatched == 0 {
		return 0, false
	}
	return ft - r.Dispatched, true
}

// TokenGaps calls fn for each gap between consecutive content events whose
// later chunk carried a known number of tokens k ≥ 1, with the derived time
// per token (gap / k) and k. It is a derived figure: chunks are not tokens.
func (r *Record) TokenGaps(fn func(perToken time.Duration, tokens int)) {
	for i, g := range r.ChunkGaps {
		if i+1 >= len(r.ChunkTokens) {
			return
		}
		if k := r.ChunkTokens[i+1]; k > 0 {
			fn(g/time.Duration(k), k)
		}
	}
}

// TTFR is the time to the first reasoning token from the planned time.
func (r *Record) TTFR() (time.Duration, bool) {
	if r.FirstReasoning == 0 {
		return 0, false
	}
	return r.FirstReasoning - r.Planned, true
}

// E2E is end minus planned, defined for requests that reached an end and were sent.
func (r *Record) E2E() (time.Duration, bool) {
	if r.End == 0 || r.Dispatched == 0 {
		return 0, false
	}
	return r.End - r.Planned, true
}

// DispatchLag is dispatched minus planned.
func (r *Record) DispatchLag() (time.Duration, bool) {
	if r.Dispatched == 0 {
		return 0, false
	}
	return r.Dispatched - r.Planned, true
}

// TPOT is (last content − first content) / (completion tokens − 1), defined
// only when the server reported a completion count above one.
func (r *Record) TPOT() (time.Duration, bool) {
	if !r.Usage.Known || r.Usage.Completion < 2 || r.FirstContent == 0 || r.LastContent < r.FirstContent {
		return 0, false
	}
	return (r.LastContent - r.FirstContent) / time.Duration(r.Usage.Completion-1), true
}
