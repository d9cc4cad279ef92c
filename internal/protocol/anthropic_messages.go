package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// AnthropicMessages is the Anthropic Messages API (POST {base}/messages with
// stream: true). Its stream is typed events in a fixed order: message_start,
// then content blocks (content_block_start, content_block_delta…,
// content_block_stop), message_delta (stop_reason, cumulative output
// tokens), message_stop. ping may come anywhere; error ends the stream.
// Its key goes in x-api-key (see AuthStyle), which the Client adds.
type AnthropicMessages struct{}

// Name implements Adapter.
func (AnthropicMessages) Name() string { return APIAnthropicMessages }

// AuthStyle implements Adapter: Anthropic takes its key in x-api-key.
func (AnthropicMessages) AuthStyle() AuthStyle { return AuthXAPIKey }

type anthRequest struct {
	Model     string    `json:"model,omitempty"`
	System    string    `json:"system,omitempty"`
	Messages  []Message `json:"messages"`
	MaxTokens int       `json:"max_tokens"`
	Stream    bool      `json:"stream"`
}

// anthDefaultMaxTokens is sent when Params.MaxTokens is zero: the API
// requires max_tokens.
const anthDefaultMaxTokens = 1024

// Request implements Adapter. System messages go to the top-level system
// field (the API has no system role); a bare Prompt becomes one user
// message. The x-api-key and anthropic-version headers are the Client's
// (see AuthStyle and AuthOptions.AnthropicVersion).
func (AnthropicMessages) Request(ctx context.Context, base BaseURL, p Params) (*http.Request, error) {
	if p.Check != nil {
		return checkRequest(ctx, APIAnthropicMessages, base, p)
	}
	body := anthRequest{Model: p.Model, MaxTokens: p.MaxTokens, Stream: true}
	if body.MaxTokens <= 0 {
		body.MaxTokens = anthDefaultMaxTokens
	}
	for _, m := range p.Messages {
		if m.Role == "system" {
			if body.System != "" {
				body.System += "\n\n"
			}
			body.System += m.Content
			continue
		}
		body.Messages = append(body.Messages, m)
	}
	if len(body.Messages) == 0 {
		body.Messages = []Message{{Role: "user", Content: p.Prompt}}
	}
	return postStream(ctx, APIAnthropicMessages, base, "messages", body)
}

// NewRequest implements Adapter.
func (a AnthropicMessages) NewRequest(ctx context.Context, base string, p Params) (*http.Request, error) {
	return requestTo(ctx, a, base, p)
}

// NewDecoder implements Adapter.
func (AnthropicMessages) NewDecoder() Decoder { return &anthDecoder{open: map[int]bool{}} }

type anthUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

// prompt is every input token the request consumed: uncached plus cache
// writes plus cache reads (the API reports them apart). ok is false when the
// object names no input count at all. A part that cannot be true (negative
// or absurd) makes the sum -1, which CheckUsage refuses: the parts are
// checked before they are added, so a sum never overflows.
func (u *anthUsage) prompt() (n int, ok bool) {
	for _, p := range []*int{u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens} {
		if p == nil {
			continue
		}
		ok = true
		if n < 0 || *p < 0 || *p > ledger.MaxUsageTokens {
			n = -1
			continue
		}
		n += *p
	}
	return n, ok
}

// cache is the cache part of a usage object: reads and writes as the
// server sent them (checked against the prompt by ledger.Usage.WithCache).
func (u *anthUsage) cache() ledger.CacheReport {
	var c ledger.CacheReport
	if p := u.CacheReadInputTokens; p != nil {
		c.Read, c.HasRead = int64(*p), true
	}
	if p := u.CacheCreationInputTokens; p != nil {
		c.Write, c.HasWrite = int64(*p), true
	}
	return c
}

type anthEvent struct {
	Type    jsonName `json:"type"`
	Index   jsonInt  `json:"index"`
	Message *struct {
		Model string     `json:"model"`
		Usage *anthUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type     jsonName `json:"type"`
		Text     jsonText `json:"text"`
		Thinking jsonText `json:"thinking"`
	} `json:"content_block"`
	Delta *struct {
		Type       jsonName `json:"type"`
		Text       jsonText `json:"text"`
		Thinking   jsonText `json:"thinking"`
		StopReason *string  `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthUsage      `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// anthMaxOpenBlocks bounds the decoder's state whatever the server sends.
const anthMaxOpenBlocks = 256

type anthDecoder struct {
	started bool
	done    bool
	prompt  int                // input tokens from message_start (or a later message_delta)
	cache   ledger.CacheReport // cache reads and writes, from the same usage as prompt
	open    map[int]bool
	ev      anthEvent // reused: one allocation less per event
}

// CanEnd implements Decoder: the stream could end here but for
// message_stop when it started and no content block is open.
func (d *anthDecoder) CanEnd() bool { return d.started && len(d.open) == 0 }

// Decode implements Decoder.
func (d *anthDecoder) Decode(name string, data []byte) (Event, error) {
	const api = APIAnthropicMessages
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Event{}, nil
	}
	if d.done {
		return Event{}, decodeErr(api, ledger.ReasonDataAfterDone, "event after message_stop")
	}
	e := &d.ev
	*e = anthEvent{}
	if ev, stop, err := unmarshalEvent(api, name, "event", data, e); stop {
		return ev, err
	}
	typ := eventType(string(e.Type), name)
	switch typ {
	case "ping":
		return Event{}, nil
	case "error":
		return Event{Err: errorObject(data)}, nil
	case "message_start":
		if d.started {
			return Event{}, decodeErr(api, ledger.ReasonProtocolError, "second message_start")
		}
		if e.Message == nil {
			return Event{}, decodeErr(api, ledger.ReasonMalformed, "message_start without message")
		}
		d.started = true
		if u := e.Message.Usage; u != nil {
			d.prompt, _ = u.prompt()
			d.cache = u.cache()
		}
		return Event{Model: e.Message.Model}, nil
	case "":
		if se := jsonErrorMember(e.Error); se != nil {
			// A bare {"error": …} (no type, no event line), as OpenAI-style
			// servers send it: an in-band error all the same.
			return Event{Err: se}, nil
		}
		return Event{}, decodeErr(api, ledger.ReasonMalformed, "event has no type")
	}
	if !d.started {
		return Event{}, decodeErr(api, ledger.ReasonProtocolError, "%s before message_start", knownName(typ))
	}
	switch typ {
	case "content_block_start":
		if !e.Index.set || e.ContentBlock == nil {
			return Event{}, decodeErr(api, ledger.ReasonMalformed, "content_block_start without index or block")
		}
		if d.open[e.Index.v] {
			return Event{}, decodeErr(api, ledger.ReasonProtocolError, "content block %d started twice", e.Index.v)
		}
		if len(d.open) >= anthMaxOpenBlocks {
			return Event{}, decodeErr(api, ledger.ReasonProtocolError, "more than %d open content blocks", anthMaxOpenBlocks)
		}
		d.open[e.Index.v] = true
		return Event{
			Content:   e.ContentBlock.Type == "text" && bool(e.ContentBlock.Text),
			Reasoning: e.ContentBlock.Type == "thinking" && bool(e.ContentBlock.Thinking),
		}, nil
	case "content_block_delta":
		if !e.Index.set || e.Delta == nil {
			return Event{}, decodeErr(api, ledger.ReasonMalformed, "content_block_delta without index or delta")
		}
		if !d.open[e.Index.v] {
			return Event{}, decodeErr(api, ledger.ReasonProtocolError, "delta for content block %d that is not open", e.Index.v)
		}
		switch e.Delta.Type {
		case "text_delta":
			return Event{Content: bool(e.Delta.Text)}, nil
		case "thinking_delta":
			return Event{Reasoning: bool(e.Delta.Thinking)}, nil
		}
		// signature_delta, input_json_delta, citations_delta, …: neither.
		return Event{}, nil
	case "content_block_stop":
		if !e.Index.set {
			return Event{}, decodeErr(api, ledger.ReasonMalformed, "content_block_stop without index")
		}
		if !d.open[e.Index.v] {
			return Event{}, decodeErr(api, ledger.ReasonProtocolError, "stop for content block %d that is not open", e.Index.v)
		}
		delete(d.open, e.Index.v)
		return Event{}, nil
	case "message_delta":
		ev := Event{}
		if e.Delta != nil && e.Delta.StopReason != nil {
			ev.FinishReason = *e.Delta.StopReason
		}
		if u := e.Usage; u != nil && u.OutputTokens != nil {
			if p, ok := u.prompt(); ok {
				d.prompt, d.cache = p, u.cache() // newer servers repeat input counts here
			}
			ev.Usage = usageOf(d.prompt, *u.OutputTokens, 0, d.cache)
		}
		return ev, nil
	case "message_stop":
		if len(d.open) > 0 {
			return Event{}, decodeErr(api, ledger.ReasonProtocolError, "message_stop with %d content blocks open", len(d.open))
		}
		d.done = true
		return Event{Done: true}, nil
	}
	// Unknown event types are to be ignored (the API documents adding them).
	return Event{}, nil
}
