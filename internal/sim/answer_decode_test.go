package sim

import (
	"encoding/json"
	"testing"
)

// heard is what a client reads from one library answer, in any API:
// the text, a tool call, the finish (normalised: stop, length,
// tool_calls), the usage's completion tokens, the model and fingerprint.
type heard struct {
	text, tool, args   string
	toolID             string
	finish, stopSeq    string
	completion         int
	model, fingerprint string
	pieces             int // content or argument deltas (streams)
	done               bool
}

// decodeHeard reads a stream (evs) or a body (b) of API name.
func decodeHeard(t *testing.T, name string, evs []sseEvent, b []byte) heard {
	t.Helper()
	var h heard
	body := evs == nil
	if body {
		evs = []sseEvent{{data: b}}
	}
	for _, ev := range evs {
		if string(ev.data) == "[DONE]" {
			h.done = true
			continue
		}
		var m map[string]any
		mustJSON(t, ev.data, &m)
		switch name {
		case "openai-chat", "openai-completions":
			h.openAI(m)
		case "openai-responses":
			h.responses(t, ev.name, m)
		case "anthropic-messages":
			h.messages(ev.name, m)
		}
	}
	h.done = h.done || body
	return h
}

func str(v any) string { s, _ := v.(string); return s }

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func num0(v any) int { f, _ := v.(float64); return int(f) }

func (h *heard) openAI(m map[string]any) {
	if s := str(m["model"]); s != "" {
		h.model = s
	}
	if s := str(m["system_fingerprint"]); s != "" {
		h.fingerprint = s
	}
	if u := obj(m["usage"]); u != nil {
		h.completion = num0(u["completion_tokens"])
	}
	choices, _ := m["choices"].([]any)
	for _, c := range choices {
		c := obj(c)
		if f := str(c["finish_reason"]); f != "" {
			h.finish = f
		}
		if s, ok := c["text"].(string); ok {
			h.text += s
			if s != "" {
				h.pieces++
			}
		}
		d := obj(c["delta"])
		if d == nil {
			d = obj(c["message"])
		}
		if s := str(d["content"]); s != "" {
			h.text += s
			h.pieces++
		}
		calls, _ := d["tool_calls"].([]any)
		for _, tc := range calls {
			tc := obj(tc)
			if id := str(tc["id"]); id != "" {
				h.toolID = id
			}
			f := obj(tc["function"])
			if n := str(f["name"]); n != "" {
				h.tool = n
			}
			h.args += str(f["arguments"])
			h.pieces++
		}
	}
}

func (h *heard) responses(t *testing.T, ev string, m map[string]any) {
	switch ev {
	case "response.output_text.delta":
		h.text += str(m["delta"])
		h.pieces++
	case "response.function_call_arguments.delta":
		h.args += str(m["delta"])
		h.pieces++
	case "response.output_item.added":
		if it := obj(m["item"]); it["type"] == "function_call" {
			h.tool, h.toolID = str(it["name"]), str(it["call_id"])
		}
	case "response.function_call_arguments.done":
		if a := str(m["arguments"]); a != h.args {
			t.Errorf("arguments.done %q, deltas %q", a, h.args)
		}
	case "", "response.completed", "response.incomplete":
		r := m
		if ev != "" {
			r = obj(m["response"])
		}
		h.model, h.done = str(r["model"]), true
		h.completion = num0(obj(r["usage"])["output_tokens"])
		h.finish = "stop"
		if r["status"] == "incomplete" {
			h.finish = "length"
		}
		var text, args string
		for _, it := range r["output"].([]any) {
			it := obj(it)
			switch it["type"] {
			case "function_call":
				h.tool, h.toolID, args = str(it["name"]), str(it["call_id"]), str(it["arguments"])
				if h.finish == "stop" {
					h.finish = "tool_calls"
				}
			case "message":
				for _, c := range it["content"].([]any) {
					text += str(obj(c)["text"])
				}
			}
		}
		if ev == "" {
			h.text, h.args = text, args
		} else if text != h.text || args != h.args {
			t.Errorf("final response text %q args %q, deltas %q %q", text, args, h.text, h.args)
		}
	}
}

func (h *heard) messages(ev string, m map[string]any) {
	switch ev {
	case "message_start":
		h.model = str(obj(m["message"])["model"])
	case "content_block_start":
		if cb := obj(m["content_block"]); cb["type"] == "tool_use" {
			h.tool, h.toolID = str(cb["name"]), str(cb["id"])
		}
	case "content_block_delta":
		d := obj(m["delta"])
		h.text += str(d["text"])
		h.args += str(d["partial_json"])
		h.pieces++
	case "message_delta":
		h.stopFrom(obj(m["delta"]))
		h.completion = num0(obj(m["usage"])["output_tokens"])
	case "message_stop":
		h.done = true
	case "": // a whole body
		h.model, h.done = str(m["model"]), true
		h.stopFrom(m)
		h.completion = num0(obj(m["usage"])["output_tokens"])
		for _, c := range m["content"].([]any) {
			c := obj(c)
			h.text += str(c["text"])
			if c["type"] == "tool_use" {
				in, _ := json.Marshal(c["input"])
				h.tool, h.toolID, h.args = str(c["name"]), str(c["id"]), string(in)
			}
		}
	}
}

func (h *heard) stopFrom(d map[string]any) {
	h.stopSeq = str(d["stop_sequence"])
	switch str(d["stop_reason"]) {
	case "end_turn", "stop_sequence":
		h.finish = "stop"
	case "max_tokens":
		h.finish = "length"
	case "tool_use":
		h.finish = "tool_calls"
	default:
		h.finish = str(d["stop_reason"])
	}
}
