package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// OpenAIChat is the OpenAI chat completions API (POST {base}/chat/completions
// with stream: true), as served by OpenAI, vLLM, SGLang, TGI and most
// gateways. Visible content is choices[].delta.content; reasoning is
// delta.reasoning_content (vLLM, DeepSeek) or delta.reasoning (OpenRouter,
// newer vLLM); usage arrives in a final usage-only chunk
// (stream_options.include_usage); the stream ends with data: [DONE].
type OpenAIChat struct{}

// Name implements Adapter.
func (OpenAIChat) Name() string { return APIOpenAIChat }

type chatStreamOptions struct {
	IncludeUsage         bool `json:"include_usage"`
	ContinuousUsageStats bool `json:"continuous_usage_stats,omitempty"`
}

type chatRequest struct {
	Model         string            `json:"model,omitempty"`
	Messages      []Message         `json:"messages"`
	MaxTokens     int               `json:"max_tokens,omitempty"`
	Stream        bool              `json:"stream"`
	StreamOptions chatStreamOptions `json:"stream_options"`
}

// NewRequest implements Adapter. When Params has no Messages, the Prompt is
// sent as one user message.
func (OpenAIChat) NewRequest(ctx context.Context, base string, p Params) (*http.Request, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Never echo the base URL: it may carry credentials.
		return nil, errors.New("openai-chat: base URL must be an absolute http(s) URL")
	}
	msgs := p.Messages
	if len(msgs) == 0 {
		msgs = []Message{{Role: "user", Content: p.Prompt}}
	}
	body, err := json.Marshal(chatRequest{
		Model:     p.Model,
		Messages:  msgs,
		MaxTokens: p.MaxTokens,
		Stream:    true,
		StreamOptions: chatStreamOptions{
			IncludeUsage:         true,
			ContinuousUsageStats: p.UsageDeltas,
		},
	})
	if err != nil {
		return nil, errors.New("openai-chat: cannot encode the request body")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.JoinPath("chat/completions").String(), bytes.NewReader(body))
	if err != nil {
		return nil, errors.New("openai-chat: cannot build the request")
	}
	req.Header["Content-Type"] = []string{"application/json"}
	req.Header["Accept"] = []string{"text/event-stream"}
	return req, nil
}

// NewDecoder implements Adapter.
func (OpenAIChat) NewDecoder() Decoder { return &chatDecoder{} }

type chatUsage struct {
	PromptTokens            int `json:"prompt_tokens"`
	CompletionTokens        int `json:"completion_tokens"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// chatChoice is one choice of a chunk. Content fields are only tested for
// being non-empty strings, never copied.
type chatChoice struct {
	Delta struct {
		Content          jsonNonEmpty `json:"content"`
		ReasoningContent jsonNonEmpty `json:"reasoning_content"`
		Reasoning        jsonNonEmpty `json:"reasoning"`
	} `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type chatChunk struct {
	Model   jsonOnce        `json:"model"`
	Choices []chatChoice    `json:"choices"`
	Usage   *chatUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

// jsonNonEmpty decodes to whether a JSON value is a non-empty string,
// without unquoting or copying it.
type jsonNonEmpty bool

func (p *jsonNonEmpty) UnmarshalJSON(b []byte) error {
	*p = len(b) > 2 && b[0] == '"'
	return nil
}

// jsonOnce decodes a string only while want is set (the model name is
// needed once per stream, not once per chunk).
type jsonOnce struct {
	want bool
	v    string
}

func (o *jsonOnce) UnmarshalJSON(b []byte) error {
	if !o.want || len(b) == 0 || b[0] != '"' {
		return nil
	}
	return json.Unmarshal(b, &o.v)
}

// chatDecodeError is a chat decoder error carrying its ledger reason
// (it implements ReasonedError).
type chatDecodeError struct {
	reason ledger.Reason
	msg    string
}

func (e *chatDecodeError) Error() string         { return "openai-chat: " + e.msg }
func (e *chatDecodeError) Reason() ledger.Reason { return e.reason }

type chatDecoder struct {
	chunk    chatChunk // reused: its Choices array survives between chunks
	model    bool      // a model name was seen
	done     bool
	prevOut  int  // cumulative completion tokens reported so far
	noDeltas bool // a content chunk came without usage: no per-chunk counts
}

var chatDone = []byte("[DONE]")

// Decode implements Decoder. A chunk whose delta carries only a role, or an
// empty content string, is not content.
func (d *chatDecoder) Decode(name string, data []byte) (Event, error) {
	data = bytes.TrimSpace(data)
	if d.done {
		return Event{}, &chatDecodeError{ledger.ReasonDataAfterDone, "event after [DONE]"}
	}
	if len(data) == 0 {
		return Event{}, nil
	}
	if bytes.Equal(data, chatDone) {
		d.done = true
		return Event{Done: true}, nil
	}
	if data[0] != '{' {
		return Event{}, &chatDecodeError{ledger.ReasonMalformed, "chunk is not a JSON object"}
	}
	c := &d.chunk
	clear(c.Choices[:cap(c.Choices)]) // stale fields must not survive into this chunk
	*c = chatChunk{Choices: c.Choices[:0], Model: jsonOnce{want: !d.model}}
	if err := json.Unmarshal(data, c); err != nil {
		return Event{}, &chatDecodeError{ledger.ReasonMalformed, "chunk is not valid JSON"}
	}
	if se := jsonErrorMember(c.Error); se != nil {
		return Event{Err: se}, nil
	}
	if name == "error" {
		return Event{Err: &ServerError{Type: "error"}}, nil
	}
	ev := Event{Model: c.Model.v}
	if ev.Model != "" {
		d.model = true
	}
	if u := c.Usage; u != nil {
		ev.Usage = &ledger.Usage{Known: true, Prompt: u.PromptTokens, Completion: u.CompletionTokens}
		if u.CompletionTokensDetails != nil {
			ev.Usage.Reasoning = u.CompletionTokensDetails.ReasoningTokens
		}
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Delta.Content {
			ev.Content = true
		}
		if ch.Delta.ReasoningContent || ch.Delta.Reasoning {
			ev.Reasoning = true
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" && ev.FinishReason == "" {
			ev.FinishReason = *ch.FinishReason
		}
	}
	ev.Tokens = d.tokens(ev)
	return ev, nil
}

// tokens derives the output tokens a content chunk carried from cumulative
// per-chunk usage (vendor continuous usage stats). It never guesses: once a
// content chunk arrives without usage, no further counts are derived.
func (d *chatDecoder) tokens(ev Event) int {
	u := ev.Usage
	if !ev.Content {
		if u != nil && u.Completion >= d.prevOut {
			d.prevOut = u.Completion
		}
		return 0
	}
	if u == nil || d.noDeltas || u.Completion < d.prevOut {
		d.noDeltas = true
		return 0
	}
	n := u.Completion - d.prevOut
	d.prevOut = u.Completion
	return n
}

// jsonErrorMember reads an OpenAI-style error member ({"error": {"type",
// "code"}} or {"error": "text"}); nil when absent or null. Only the type
// and code are kept: messages may echo the prompt.
func jsonErrorMember(raw json.RawMessage) *ServerError {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var obj struct {
		Type json.RawMessage `json:"type"`
		Code json.RawMessage `json:"code"`
	}
	se := &ServerError{Type: "error"}
	if err := json.Unmarshal(raw, &obj); err == nil {
		if t := jsonLabel(obj.Type); t != "" {
			se.Type = t
		}
		se.Code = jsonLabel(obj.Code)
	}
	return se
}

// jsonLabel turns a JSON string or integer into a short printable label.
func jsonLabel(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil {
			return ""
		}
		return strconv.FormatInt(n, 10)
	}
	return safeLabel(s, 48)
}

// safeLabel keeps [A-Za-z0-9_.:/-] of s, at most max bytes: server-sent
// identifiers end up in ledger error text.
func safeLabel(s string, max int) string {
	b := make([]byte, 0, min(len(s), max))
	for i := 0; i < len(s) && len(b) < max; i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == ':' || c == '/' {
			b = append(b, c)
		}
	}
	return string(b)
}
