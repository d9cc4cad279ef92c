package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// The API names accepted in config and on the command line.
const (
	APIOpenAIChat        = "openai-chat"
	APIOpenAICompletions = "openai-completions"
	APIOpenAIResponses   = "openai-responses"
	APIAnthropicMessages = "anthropic-messages"
)

// DefaultAPI is the API used when none is configured.
const DefaultAPI = APIOpenAIChat

// registry maps each API name to its constructor. It is read-only after
// package initialisation (a fixed table, not mutable state).
var registry = map[string]func() Adapter{
	APIOpenAIChat:        func() Adapter { return OpenAIChat{} },
	APIOpenAICompletions: func() Adapter { return OpenAICompletions{} },
	APIOpenAIResponses:   func() Adapter { return OpenAIResponses{} },
	APIAnthropicMessages: func() Adapter { return AnthropicMessages{} },
}

// Names returns the valid API names, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(registry))
}

// Lookup returns the adapter for an API name. An unknown name is an error
// that lists the valid names.
func Lookup(name string) (Adapter, error) {
	mk, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("protocol: unknown api %q (valid: %s)", name, strings.Join(Names(), ", "))
	}
	return mk(), nil
}

// AuthStyle is how an API expects its API key to be presented.
type AuthStyle string

// Auth styles.
const (
	AuthBearer  AuthStyle = "bearer"    // Authorization: Bearer <key> (OpenAI and compatibles)
	AuthXAPIKey AuthStyle = "x-api-key" // x-api-key: <key> (Anthropic)
)

// AuthStyler is implemented by adapters whose API does not use a bearer
// token. The Client asks it; an adapter that does not implement it uses
// AuthBearer.
type AuthStyler interface {
	AuthStyle() AuthStyle
}

// AuthStyleOf returns the auth style of an adapter (AuthBearer by default).
func AuthStyleOf(a Adapter) AuthStyle {
	if s, ok := a.(AuthStyler); ok {
		return s.AuthStyle()
	}
	return AuthBearer
}

// ReasonedError is implemented by decoder errors: the ledger reason (one of
// the stream_error reasons) the stream should end with. Use ReasonOf to
// read it from a wrapped error.
type ReasonedError interface {
	error
	Reason() ledger.Reason
}

// ReasonOf returns the ledger reason carried by a decoder error (wrapped or
// not), if any.
func ReasonOf(err error) (ledger.Reason, bool) {
	var re ReasonedError
	if errors.As(err, &re) {
		return re.Reason(), true
	}
	return "", false
}

// adapterError is a decoder error: which API, what went wrong (in the
// adapter's own words, never the payload) and the ledger reason.
type adapterError struct {
	api    string
	reason ledger.Reason
	msg    string
}

func (e *adapterError) Error() string         { return e.api + ": " + e.msg }
func (e *adapterError) Reason() ledger.Reason { return e.reason }

func decodeErr(api string, reason ledger.Reason, format string, args ...any) error {
	return &adapterError{api: api, reason: reason, msg: fmt.Sprintf(format, args...)}
}

// postStream builds a streaming POST of body (JSON) to base joined with path.
func postStream(ctx context.Context, api, base, path string, body any) (*http.Request, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The base URL is not echoed: it may carry credentials.
		return nil, fmt.Errorf("%s: base URL must be an absolute http(s) URL", api)
	}
	u = u.JoinPath(path)
	buf, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding request body: %w", api, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(buf))
	if err != nil {
		return nil, fmt.Errorf("%s: building request: %w", api, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return req, nil
}

// joinPrompt turns chat messages into one completion-style prompt.
func joinPrompt(p Params) string {
	if p.Prompt != "" || len(p.Messages) == 0 {
		return p.Prompt
	}
	parts := make([]string, 0, len(p.Messages))
	for _, m := range p.Messages {
		parts = append(parts, m.Content)
	}
	return strings.Join(parts, "\n\n")
}

// usageDeltas derives per-event output token counts from cumulative usage
// reported on content events (vendor per-chunk usage). It never guesses:
// once a content event arrives without usage, the stream is not reporting
// per-chunk usage and no further per-event counts are derived.
type usageDeltas struct {
	prev   int
	broken bool
}

// tokens returns the output tokens a content event carried (0 = unknown)
// given the cumulative completion count it reported (u may be nil).
func (d *usageDeltas) tokens(content bool, u *ledger.Usage) int {
	if !content {
		if u != nil && u.Known && u.Completion >= d.prev {
			d.prev = u.Completion
		}
		return 0
	}
	if u == nil || !u.Known || d.broken {
		d.broken = true
		return 0
	}
	n := u.Completion - d.prev
	if n <= 0 {
		if n < 0 {
			d.broken = true
		}
		return 0
	}
	d.prev = u.Completion
	return n
}
