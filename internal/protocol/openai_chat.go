package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

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

// Request implements Adapter. When Params has no Messages, the Prompt is
// sent as one user message.
func (OpenAIChat) Request(ctx context.Context, base BaseURL, p Params) (*http.Request, error) {
	if p.Check != nil {
		return checkRequest(ctx, APIOpenAIChat, base, p)
	}
	if base.IsZero() {
		return nil, errors.New("openai-chat: " + errBaseURL.Error())
	}
	msgs := p.Messages
	if len(msgs) == 0 {
		msgs = []Message{{Role: "user", Content: p.Prompt}}
	}
	body := appendChatRequest(make([]byte, 0, chatRequestSize(p.Model, msgs)), p.Model, msgs, p.MaxTokens, p.UsageDeltas)
	// The URL is set as parsed: formatting it for NewRequest to parse again
	// would cost a second parse per request.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "", bytes.NewReader(body))
	if err != nil {
		return nil, errors.New("openai-chat: cannot build the request")
	}
	req.URL = base.Join("chat/completions")
	req.Host = req.URL.Host
	req.Header["Content-Type"] = []string{"application/json"}
	req.Header["Accept"] = []string{"text/event-stream"}
	return req, nil
}

// NewRequest implements Adapter.
func (a OpenAIChat) NewRequest(ctx context.Context, base string, p Params) (*http.Request, error) {
	return requestTo(ctx, a, base, p)
}

// NewDecoder implements Adapter.
func (OpenAIChat) NewDecoder() Decoder { return &chatDecoder{} }

// AuthStyle implements Adapter: a bearer token.
func (OpenAIChat) AuthStyle() AuthStyle { return AuthBearer }

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
	Usage   *openAIUsage    `json:"usage"`
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

type chatDecoder struct {
	chunk    chatChunk // reused: its Choices array survives between chunks
	model    bool      // a model name was seen
	done     bool
	deltas   usageDeltas
	slowOnly bool // tests: always decode with encoding/json (the reference)
}

// CanEnd implements Decoder: a chat stream has no state to leave open.
func (d *chatDecoder) CanEnd() bool { return true }

// Decode implements Decoder. A chunk whose delta carries only a role, or an
// empty content string, is not content. Chunks are read by a single-pass
// scanner specialised to the chunk shape (chatScan); whatever it is not sure
// about (invalid JSON, type mismatches, escaped or case-folded keys,
// duplicate keys, deep nesting) is decoded again by encoding/json, which
// decides. The scanner therefore only ever answers for valid JSON it reads
// exactly as encoding/json does.
func (d *chatDecoder) Decode(name string, data []byte) (Event, error) {
	data = bytes.TrimSpace(data)
	if d.done {
		return Event{}, decodeErr(APIOpenAIChat, ledger.ReasonDataAfterDone, "event after [DONE]")
	}
	if len(data) == 0 {
		return Event{}, nil
	}
	if bytes.Equal(data, doneMarker) {
		d.done = true
		return Event{Done: true}, nil
	}
	if name == "error" {
		// Whatever its data (an error member, a bare error object, text).
		return Event{Err: errorObject(data)}, nil
	}
	if data[0] != '{' {
		return Event{}, decodeErr(APIOpenAIChat, ledger.ReasonMalformed, "chunk is not a JSON object")
	}
	var f chatFields
	sc := chatScan{b: data}
	if d.slowOnly || !sc.chunk(&f, !d.model) {
		f = chatFields{}
		if err := d.slow(data, &f); err != nil {
			return Event{}, err
		}
	}
	if se := jsonErrorMember(f.errRaw); se != nil {
		return Event{Err: se}, nil
	}
	ev := Event{Model: f.model, Content: f.content, Reasoning: f.reasoning, FinishReason: f.finish}
	if ev.Model != "" {
		d.model = true
	}
	if f.usage {
		ev.Usage = usageOf(f.prompt, f.completion, f.reasoningTokens, ledger.CacheReport{Read: int64(f.cached), HasRead: f.cachedSet})
	}
	ev.Tokens = d.deltas.tokens(ev.Content, ev.Usage)
	return ev, nil
}

// chatFields is what a chunk says, whichever path read it.
type chatFields struct {
	errRaw             []byte // the raw "error" member, nil when absent
	model              string // only while the decoder still wants it
	content, reasoning bool
	finish             string // first non-empty finish_reason
	usage              bool
	prompt, completion int
	reasoningTokens    int
	cached             int  // usage.prompt_tokens_details.cached_tokens
	cachedSet          bool // cached was there (not absent, not null)
}

// slow decodes a chunk with encoding/json (the reference reading).
func (d *chatDecoder) slow(data []byte, f *chatFields) error {
	c := &d.chunk
	clear(c.Choices[:cap(c.Choices)]) // stale fields must not survive into this chunk
	*c = chatChunk{Choices: c.Choices[:0], Model: jsonOnce{want: !d.model}}
	if err := json.Unmarshal(data, c); err != nil {
		return jsonDecodeErr(APIOpenAIChat, "chunk", err)
	}
	f.errRaw = c.Error
	f.model = c.Model.v
	if u := c.Usage; u != nil {
		f.usage, f.prompt, f.completion = true, u.PromptTokens, u.CompletionTokens
		if u.CompletionTokensDetails != nil {
			f.reasoningTokens = u.CompletionTokensDetails.ReasoningTokens
		}
		if d := u.PromptTokensDetails; d != nil {
			f.cached, f.cachedSet = d.CachedTokens.v, d.CachedTokens.set
		}
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		f.content = f.content || bool(ch.Delta.Content)
		f.reasoning = f.reasoning || bool(ch.Delta.ReasoningContent) || bool(ch.Delta.Reasoning)
		if ch.FinishReason != nil && *ch.FinishReason != "" && f.finish == "" {
			f.finish = *ch.FinishReason // server text: the Client cleans it
		}
	}
	return nil
}

// finishString returns a finish reason as a string without allocating for
// the common ones (the Client cleans it, as every server string).
func finishString(b []byte) string {
	switch string(b) {
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "tool_calls":
		return "tool_calls"
	case "content_filter":
		return "content_filter"
	}
	return string(b)
}
