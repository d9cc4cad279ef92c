package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// OpenAIResponses is the OpenAI Responses API (POST {base}/responses with
// stream: true). Its stream is typed events: response.created first,
// response.output_text.delta for visible text, response.reasoning_text.delta
// and response.reasoning_summary_text.delta for reasoning, and one terminal
// event: response.completed, response.incomplete or response.failed. There
// is no [DONE] marker.
type OpenAIResponses struct{}

// Name implements Adapter.
func (OpenAIResponses) Name() string { return APIOpenAIResponses }

type respRequest struct {
	Model           string `json:"model,omitempty"`
	Input           any    `json:"input"`
	MaxOutputTokens int    `json:"max_output_tokens,omitempty"`
	Stream          bool   `json:"stream"`
	Store           *bool  `json:"store,omitempty"`
}

// Request implements Adapter. Messages are sent as input items; a bare
// Prompt (no Messages) is sent as the input string. store is false: a probe
// leaves nothing behind on the server.
func (OpenAIResponses) Request(ctx context.Context, base BaseURL, p Params) (*http.Request, error) {
	if p.Check != nil {
		return checkRequest(ctx, APIOpenAIResponses, base, p)
	}
	var input any = p.Prompt
	if len(p.Messages) > 0 {
		input = p.Messages
	}
	store := false
	return postStream(ctx, APIOpenAIResponses, base, "responses", respRequest{
		Model:           p.Model,
		Input:           input,
		MaxOutputTokens: p.MaxTokens,
		Stream:          true,
		Store:           &store,
	})
}

// NewRequest implements Adapter.
func (a OpenAIResponses) NewRequest(ctx context.Context, base string, p Params) (*http.Request, error) {
	return requestTo(ctx, a, base, p)
}

// NewDecoder implements Adapter.
func (OpenAIResponses) NewDecoder() Decoder { return &respDecoder{} }

// AuthStyle implements Adapter: a bearer token.
func (OpenAIResponses) AuthStyle() AuthStyle { return AuthBearer }

type respUsage struct {
	InputTokens         int `json:"input_tokens"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	InputTokensDetails *openAITokenDetails `json:"input_tokens_details"`
}

type respEvent struct {
	Type     jsonName        `json:"type"`
	Delta    jsonText        `json:"delta"`
	Error    json.RawMessage `json:"error"`
	Response *struct {
		Model             string          `json:"model"`
		Usage             *respUsage      `json:"usage"`
		Error             json.RawMessage `json:"error"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
	} `json:"response"`
}

type respDecoder struct {
	started bool
	done    bool
	ev      respEvent // reused: one allocation less per event
}

// CanEnd implements Decoder: a Responses stream gives its finish reason
// only with its terminal event, so it never ends without one.
func (d *respDecoder) CanEnd() bool { return d.done }

// Decode implements Decoder.
func (d *respDecoder) Decode(name string, data []byte) (Event, error) {
	const api = APIOpenAIResponses
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Event{}, nil
	}
	if bytes.Equal(data, doneMarker) {
		// Not part of the API, but some gateways append it: harmless after
		// the terminal event, a truncation before it.
		if d.done {
			return Event{}, nil
		}
		return Event{}, decodeErr(api, ledger.ReasonProtocolError, "[DONE] before a terminal response event")
	}
	if d.done {
		return Event{}, decodeErr(api, ledger.ReasonDataAfterDone, "event after the terminal response event")
	}
	e := &d.ev
	*e = respEvent{}
	if ev, stop, err := unmarshalEvent(api, name, "event", data, e); stop {
		return ev, err
	}
	typ := eventType(string(e.Type), name)
	switch typ {
	case "error":
		return Event{Err: errorObject(data)}, nil
	case "":
		if se := jsonErrorMember(e.Error); se != nil {
			return Event{Err: se}, nil
		}
		return Event{}, decodeErr(api, ledger.ReasonMalformed, "event has no type")
	case "response.created":
		if d.started {
			return Event{}, decodeErr(api, ledger.ReasonProtocolError, "second response.created")
		}
		d.started = true
		ev := Event{}
		if e.Response != nil {
			ev.Model = e.Response.Model
		}
		return ev, nil
	}
	if !d.started {
		return Event{}, decodeErr(api, ledger.ReasonProtocolError, "%s before response.created", knownName(typ))
	}
	switch typ {
	case "response.output_text.delta":
		return Event{Content: bool(e.Delta)}, nil
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		return Event{Reasoning: bool(e.Delta)}, nil
	case "response.completed", "response.incomplete", "response.failed":
		d.done = true
		ev := Event{Done: true}
		if r := e.Response; r != nil {
			ev.Model = r.Model
			if u := r.Usage; u != nil {
				reasoning := 0
				if u.OutputTokensDetails != nil {
					reasoning = u.OutputTokensDetails.ReasoningTokens
				}
				ev.Usage = usageOf(u.InputTokens, u.OutputTokens, reasoning, u.InputTokensDetails.cache())
			}
			switch typ {
			case "response.completed":
				ev.FinishReason = "completed"
			case "response.incomplete":
				ev.FinishReason = "incomplete"
				if r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "" {
					ev.FinishReason = r.IncompleteDetails.Reason
				}
			case "response.failed":
				ev.Err = jsonErrorMember(r.Error)
			}
		}
		if typ == "response.failed" && ev.Err == nil {
			ev.Err = &ServerError{Type: "response.failed"}
		}
		return ev, nil
	}
	// Every other event (response.in_progress, output_item.added, *.done,
	// function-call arguments, …) carries no timing boundary.
	return Event{}, nil
}
