package protocol

import (
	"context"
	"net/http"
	"time"

	"github.com/llmprobe/llmprobe/internal/answercheck"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Message is one chat message of a prompt.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Params is what one probe request asks for. Prompt material never reaches
// the ledger, logs or labels.
type Params struct {
	Model       string
	Messages    []Message // chat-style APIs (openai-chat, openai-responses, anthropic-messages)
	Prompt      string    // completion-style API (openai-completions); adapters join Messages when empty
	MaxTokens   int       // sent as max_tokens / max_output_tokens
	UsageDeltas bool      // opt in to per-chunk usage (vendor extension, e.g. vLLM continuous_usage_stats)
	// Check, when set, makes the request an answer canary: sent
	// deterministically with the check's request shape, its answer kept
	// (bounded) and judged, the verdict on the record (rec.Check).
	Check *answercheck.Check
	// RecordExcerpt keeps a sanitised excerpt of a check's answer on the
	// record (record_answers: excerpt).
	RecordExcerpt bool
}

// Event is what an adapter makes of one server-sent event. One SSE event can
// carry several facts at once (content, a finish reason and usage together).
// Its strings (FinishReason, Model, Err's Type and Code) are the server's
// text as sent: the Client cleans them (sanitize) before they reach a
// record, an error text or a label. Usage is checked as it is decoded
// (ledger.CheckUsage).
type Event struct {
	Content      bool          // carried non-empty visible content (role-only or empty deltas do not count)
	Reasoning    bool          // carried non-empty reasoning content
	Tokens       int           // output tokens this event carried, from per-chunk usage deltas; 0 = unknown
	Usage        *ledger.Usage // the server's usage, when this event reports it (Known false and Invalid when its counts cannot be true)
	FinishReason string        // finish/stop reason, when this event reports it
	Model        string        // the model the server says is answering, when this event names it
	Done         bool          // the API's terminal marker ([DONE], message_stop, response.completed)
	Err          *ServerError  // an in-band error event/object
}

// ServerError is an error the server reported in-band (in the stream or in a
// JSON error body): its type, code and message as sent (server text: the
// Client cleans each before it reaches a record, and keeps the message
// only for in-band errors, cut short).
type ServerError struct {
	Type    string
	Code    string
	Message string
}

// Adapter is one streaming API: how to build its request and how to turn its
// server-sent events into Events. One file per API implements it.
type Adapter interface {
	// Name is the API's name as used in config and flags (e.g. "openai-chat").
	Name() string
	// Request builds the streaming HTTP request for base (e.g.
	// "http://127.0.0.1:8000/v1", parsed once: BaseURL). Auth headers are
	// added by the Client.
	Request(ctx context.Context, base BaseURL, p Params) (*http.Request, error)
	// NewRequest is Request for a base URL as text, parsed for this one
	// request (for Go callers that hold no BaseURL).
	NewRequest(ctx context.Context, base string, p Params) (*http.Request, error)
	// NewDecoder returns a decoder for one stream; decoders may keep state
	// (event order) and are used by one goroutine.
	NewDecoder() Decoder
	// AuthStyle is how the API takes its key (the Client adds it): a
	// method of every adapter, so no wrapper can hide it.
	AuthStyle() AuthStyle
}

// Decoder turns one SSE event (its event name and joined data) into an Event.
// An error means the stream is malformed: it carries the ledger reason.
type Decoder interface {
	Decode(name string, data []byte) (Event, error)
	// CanEnd says whether the stream could end at this point but for its
	// terminal marker (e.g. no Anthropic content block is left open): a
	// body that ends cleanly after a finish reason is then ok. A method of
	// every decoder, so that no wrapper can hide it.
	CanEnd() bool
}

// Timeouts bound one request. Zero disables a bound.
type Timeouts struct {
	Connect      time.Duration // TCP (and TLS) connect
	Headers      time.Duration // from dispatch to response headers
	FirstContent time.Duration // from dispatch to first visible content
	Idle         time.Duration // longest gap between stream bytes once headers arrived
	Total        time.Duration // from dispatch to stream end
}
