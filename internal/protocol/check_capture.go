package protocol

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/ledger"
)

// The answer of a check request is captured beside the adapter's decoder:
// checkDecoder lets the adapter decode each event as for any request (the
// timings, the outcome), then reads the same event once more with
// encoding/json for what the judge needs (visible text, tool calls,
// system_fingerprint). Only check requests pay for it: an ordinary
// request's decoder is not wrapped.

// Bounds on a captured answer, whatever the server sends.
const (
	maxToolCalls   = 16
	maxToolName    = 128
	maxToolArgs    = 16 << 10
	maxFingerprint = 128
)

// answerBuf assembles an answer within its bounds.
type answerBuf struct {
	a     answercheck.Answer
	calls map[string]int // a call's key (stream index or item id) → index in a.ToolCalls
}

func (b *answerBuf) text(s string) {
	if b.a.Truncated {
		return
	}
	if room := answercheck.MaxAnswerBytes - len(b.a.Text); len(s) > room {
		s, b.a.Truncated = s[:room], true
	}
	b.a.Text += s
}

// call returns the tool call keyed key, starting it when new (nil past
// the bound).
func (b *answerBuf) call(key string) *answercheck.ToolCall {
	if i, ok := b.calls[key]; ok {
		return &b.a.ToolCalls[i]
	}
	if len(b.a.ToolCalls) >= maxToolCalls {
		return nil
	}
	if b.calls == nil {
		b.calls = map[string]int{}
	}
	b.calls[key] = len(b.a.ToolCalls)
	b.a.ToolCalls = append(b.a.ToolCalls, answercheck.ToolCall{})
	return &b.a.ToolCalls[len(b.a.ToolCalls)-1]
}

func setName(c *answercheck.ToolCall, name string) {
	if c != nil && name != "" && c.Name == "" {
		c.Name = cutBytes(name, maxToolName)
	}
}

func addArgs(c *answercheck.ToolCall, s string) {
	if c == nil {
		return
	}
	if room := maxToolArgs - len(c.Arguments); len(s) > room {
		s = s[:max(room, 0)]
	}
	c.Arguments += s
}

func cutBytes(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// checkDecoder wraps a stream's decoder for a check request.
type checkDecoder struct {
	Decoder
	api string
	buf answerBuf
	ev  captureEvent
}

// captureEvent is the union of what the four APIs' events carry for an
// answer (a field absent in one API is simply never set).
type captureEvent struct {
	Type              string `json:"type"`
	SystemFingerprint string `json:"system_fingerprint"`
	Choices           []struct {
		Text  *string `json:"text"` // completions
		Delta struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	// Responses
	Delta       json.RawMessage `json:"delta"` // a string (Responses) or an object (Anthropic)
	ItemID      string          `json:"item_id"`
	OutputIndex *int            `json:"output_index"`
	Arguments   *string         `json:"arguments"`
	Item        *struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"item"`
	// Anthropic
	Index        *int `json:"index"`
	ContentBlock *struct {
		Type string `json:"type"`
		Text string `json:"text"`
		Name string `json:"name"`
	} `json:"content_block"`
}

// anthDelta is an Anthropic content_block_delta's delta.
type anthDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
}

// Decode implements Decoder: the adapter decides; the capture reads only
// events the adapter accepted.
func (d *checkDecoder) Decode(name string, data []byte) (Event, error) {
	ev, err := d.Decoder.Decode(name, data)
	if err != nil || ev.Err != nil {
		return ev, err
	}
	if ev.FinishReason != "" && d.buf.a.FinishReason == "" {
		d.buf.a.FinishReason = ev.FinishReason
	}
	if ev.Model != "" {
		d.buf.a.Model = ev.Model
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return ev, nil
	}
	e := &d.ev
	*e = captureEvent{}
	if json.Unmarshal(data, e) != nil {
		return ev, nil // the adapter's reading stands; the judge sees what was read
	}
	d.capture(name, e)
	return ev, nil
}

func (d *checkDecoder) capture(name string, e *captureEvent) {
	b := &d.buf
	if e.SystemFingerprint != "" && b.a.SystemFingerprint == "" {
		b.a.SystemFingerprint = cutBytes(e.SystemFingerprint, maxFingerprint)
	}
	switch d.api {
	case APIOpenAIChat, APIOpenAICompletions:
		for _, ch := range e.Choices {
			if ch.Text != nil {
				b.text(*ch.Text)
			}
			if ch.Delta.Content != nil {
				b.text(*ch.Delta.Content)
			}
			for i, tc := range ch.Delta.ToolCalls {
				idx := i
				if tc.Index != nil {
					idx = *tc.Index
				}
				c := b.call(strconv.Itoa(idx))
				setName(c, tc.Function.Name)
				addArgs(c, tc.Function.Arguments)
			}
		}
	case APIOpenAIResponses:
		typ := eventType(e.Type, name)
		switch typ {
		case "response.output_text.delta":
			var s string
			if json.Unmarshal(e.Delta, &s) == nil {
				b.text(s)
			}
		case "response.output_item.added", "response.output_item.done":
			if it := e.Item; it != nil && it.Type == "function_call" {
				c := b.call(responsesKey(e.OutputIndex, it.ID))
				setName(c, it.Name)
				if typ == "response.output_item.done" && it.Arguments != "" && c != nil {
					c.Arguments = "" // the whole arguments: they replace the pieces
					addArgs(c, it.Arguments)
				}
			}
		case "response.function_call_arguments.delta":
			var s string
			if json.Unmarshal(e.Delta, &s) == nil {
				addArgs(b.call(responsesKey(e.OutputIndex, e.ItemID)), s)
			}
		case "response.function_call_arguments.done":
			if e.Arguments != nil {
				if c := b.call(responsesKey(e.OutputIndex, e.ItemID)); c != nil {
					c.Arguments = ""
					addArgs(c, *e.Arguments)
				}
			}
		}
	case APIAnthropicMessages:
		if e.Index == nil {
			return
		}
		key := strconv.Itoa(*e.Index)
		switch eventType(e.Type, name) {
		case "content_block_start":
			if cb := e.ContentBlock; cb != nil {
				switch cb.Type {
				case "text":
					b.text(cb.Text)
				case "tool_use":
					setName(b.call(key), cb.Name)
				}
			}
		case "content_block_delta":
			var dl anthDelta
			if json.Unmarshal(e.Delta, &dl) != nil {
				return
			}
			switch dl.Type {
			case "text_delta":
				b.text(dl.Text)
			case "input_json_delta":
				if _, ok := b.calls[key]; ok {
					addArgs(b.call(key), dl.PartialJSON)
				}
			}
		}
	}
}

// responsesKey keys a Responses function call by its output index (every
// event of the item carries it), else by its item id.
func responsesKey(idx *int, id string) string {
	if idx != nil {
		return strconv.Itoa(*idx)
	}
	return "id:" + id
}

// answer is the captured answer, with the server's usage from the record.
func (d *checkDecoder) answer(rec *ledger.Record) answercheck.Answer {
	a := d.buf.a
	if rec.Usage.Known && !rec.Usage.Invalid {
		a.OutputTokens, a.OutputTokensKnown = rec.Usage.Completion, true
	}
	return a
}
