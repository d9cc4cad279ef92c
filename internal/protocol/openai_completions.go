package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// OpenAICompletions is the legacy OpenAI completions API (POST
// {base}/completions with a prompt), as served by OpenAI, vLLM, SGLang and
// TGI. Content is choices[].text; the stream ends with data: [DONE].
type OpenAICompletions struct{}

// Name implements Adapter.
func (OpenAICompletions) Name() string { return APIOpenAICompletions }

type cmplRequest struct {
	Model         string              `json:"model,omitempty"`
	Prompt        string              `json:"prompt"`
	MaxTokens     int                 `json:"max_tokens,omitempty"`
	Stream        bool                `json:"stream"`
	StreamOptions openAIStreamOptions `json:"stream_options"`
}

// Request implements Adapter. Messages are joined into the prompt when
// Params.Prompt is empty.
func (OpenAICompletions) Request(ctx context.Context, base BaseURL, p Params) (*http.Request, error) {
	if p.Check != nil {
		return checkRequest(ctx, APIOpenAICompletions, base, p)
	}
	return postStream(ctx, APIOpenAICompletions, base, "completions", cmplRequest{
		Model:     p.Model,
		Prompt:    joinPrompt(p),
		MaxTokens: p.MaxTokens,
		Stream:    true,
		StreamOptions: openAIStreamOptions{
			IncludeUsage:         true,
			ContinuousUsageStats: p.UsageDeltas,
		},
	})
}

// NewRequest implements Adapter.
func (a OpenAICompletions) NewRequest(ctx context.Context, base string, p Params) (*http.Request, error) {
	return requestTo(ctx, a, base, p)
}

// NewDecoder implements Adapter.
func (OpenAICompletions) NewDecoder() Decoder { return &cmplDecoder{} }

// AuthStyle implements Adapter: a bearer token.
func (OpenAICompletions) AuthStyle() AuthStyle { return AuthBearer }

type cmplChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Text         jsonText `json:"text"`
		FinishReason *string  `json:"finish_reason"`
	} `json:"choices"`
	Usage *openAIUsage    `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type cmplDecoder struct {
	done   bool
	deltas usageDeltas
	chunk  cmplChunk // reused: its Choices array survives between chunks
}

// CanEnd implements Decoder: a completions stream has no state to leave
// open.
func (d *cmplDecoder) CanEnd() bool { return true }

// Decode implements Decoder.
func (d *cmplDecoder) Decode(name string, data []byte) (Event, error) {
	const api = APIOpenAICompletions
	data = bytes.TrimSpace(data)
	if d.done {
		return Event{}, decodeErr(api, ledger.ReasonDataAfterDone, "event after [DONE]")
	}
	if len(data) == 0 {
		return Event{}, nil
	}
	if bytes.Equal(data, doneMarker) {
		d.done = true
		return Event{Done: true}, nil
	}
	c := &d.chunk
	clear(c.Choices[:cap(c.Choices)]) // stale fields must not survive into this chunk
	*c = cmplChunk{Choices: c.Choices[:0]}
	if ev, stop, err := unmarshalEvent(api, name, "chunk", data, c); stop {
		return ev, err
	}
	if se := jsonErrorMember(c.Error); se != nil {
		return Event{Err: se}, nil
	}
	if name == "error" {
		return Event{Err: errorObject(data)}, nil
	}
	ev := Event{Model: c.Model, Usage: c.Usage.ledger()}
	for _, ch := range c.Choices {
		if ch.Text {
			ev.Content = true
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" && ev.FinishReason == "" {
			ev.FinishReason = *ch.FinishReason // server text: the Client cleans it
		}
	}
	ev.Tokens = d.deltas.tokens(ev.Content, ev.Usage)
	return ev, nil
}
