package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/llmprobe/llmprobe/internal/answercheck"
)

// Answer canaries (issue 29, docs/protocols.md "Check requests"). A request
// whose Params.Check is set is built here, not by the adapters' fast
// writers: temperature 0, a seed where the API takes one, the check's
// max_tokens, its messages (a tool round trip replayed in the API's own
// shape), stop sequences, a JSON Schema as the API's structured output
// and tools with tool_choice. Ordinary requests never come here.

// CheckSupported reports whether api can express the check's request; an
// error names why not. Configuration validation calls it for each class's
// checks and target API.
func CheckSupported(api string, c *answercheck.Check) error {
	if _, ok := registry[api]; !ok {
		return fmt.Errorf("unknown api %q", api)
	}
	switch c.Kind() {
	case answercheck.KindToolCall:
		if api == APIOpenAICompletions {
			return fmt.Errorf("tool_call: %s has no tools (use openai-chat, openai-responses or anthropic-messages)", api)
		}
	case answercheck.KindStop:
		if api == APIOpenAIResponses {
			return fmt.Errorf("stop: %s has no stop sequences", api)
		}
	case answercheck.KindJSON:
		switch send := jsonSend(c); {
		case send == "native" && api != APIOpenAIChat && api != APIOpenAICompletions:
			return fmt.Errorf("json.send: native (llama.cpp's json_schema body field) is sent on openai-chat and openai-completions only, not %s", api)
		case send == "json_object" && api == APIAnthropicMessages:
			return fmt.Errorf("json.send: %s has no json_object mode (use prompt)", api)
		}
	}
	return nil
}

// jsonSend is a json check's send mode, with its default.
func jsonSend(c *answercheck.Check) string {
	if c.JSON == nil || c.JSON.Send == "" {
		return "response_format"
	}
	return c.JSON.Send
}

// schemaPrompt is appended to the last user message when the schema is
// asked for in the prompt (send: prompt or json_object, and
// response_format on Anthropic). The simulator recognises its words.
func schemaPrompt(schema json.RawMessage) string {
	return "\n\nReply with JSON only, matching this JSON Schema: " + string(schema)
}

// The replayed tool call of a round trip.
const roundTripCallID = "call_llmprobe_0"

// checkPlan is what every API's check request is made of.
type checkPlan struct {
	c        *answercheck.Check
	msgs     []Message // the exchange, the schema prompt applied
	schema   json.RawMessage
	send     string // json send mode ("" for other kinds)
	args     string // a round trip's replayed arguments (JSON)
	maxToken int
}

func newCheckPlan(api string, p Params) (*checkPlan, error) {
	c := p.Check
	if err := CheckSupported(api, c); err != nil {
		return nil, err
	}
	pl := &checkPlan{c: c, maxToken: c.EffectiveMaxTokens()}
	if len(c.Messages) > 0 {
		for _, m := range c.Messages {
			pl.msgs = append(pl.msgs, Message{Role: m.Role, Content: m.Content})
		}
	} else {
		pl.msgs = []Message{{Role: "user", Content: c.Prompt}}
	}
	if c.JSON != nil {
		pl.schema = c.SchemaJSON()
		if pl.schema == nil {
			return nil, fmt.Errorf("%s: check %q: its JSON Schema does not compile", api, c.Name)
		}
		pl.send = jsonSend(c)
		if pl.send == "json_object" || pl.send == "prompt" || (api == APIAnthropicMessages && pl.send == "response_format") {
			last := &pl.msgs[len(pl.msgs)-1]
			last.Content += schemaPrompt(pl.schema)
		}
	}
	if c.Tool != nil {
		for i := range c.Tool.Tools {
			if c.ToolParameters(i) == nil {
				return nil, fmt.Errorf("%s: check %q: tool %d's parameters do not compile", api, c.Name, i)
			}
		}
		if rt := c.Tool.RoundTrip; rt != nil {
			pl.args = "{}"
			if len(rt.Arguments) > 0 {
				b, err := json.Marshal(rt.Arguments)
				if err != nil {
					return nil, err
				}
				pl.args = string(b)
			}
		}
	}
	return pl, nil
}

// openAIMessages is the exchange in OpenAI chat's shape, with a round
// trip's call and result appended.
func (pl *checkPlan) openAIMessages() []any {
	out := make([]any, 0, len(pl.msgs)+2)
	for _, m := range pl.msgs {
		out = append(out, m)
	}
	if t := pl.c.Tool; t != nil && t.RoundTrip != nil {
		out = append(out,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": roundTripCallID, "type": "function",
				"function": map[string]any{"name": t.Expect, "arguments": pl.args},
			}}},
			map[string]any{"role": "tool", "tool_call_id": roundTripCallID, "content": t.RoundTrip.Result})
	}
	return out
}

func (pl *checkPlan) stop() []string {
	if pl.c.Stop != nil {
		return pl.c.Stop.Sequences
	}
	return nil
}

// chatBody is the openai-chat request, and with prompt set (and no tools)
// the openai-completions one.
func (pl *checkPlan) chatBody(model string, completions bool) map[string]any {
	b := map[string]any{
		"max_tokens": pl.maxToken, "temperature": 0, "seed": pl.c.Seed,
		"stream": true, "stream_options": map[string]any{"include_usage": true},
	}
	if model != "" {
		b["model"] = model
	}
	if completions {
		b["prompt"] = joinPrompt(Params{Messages: pl.msgs})
	} else {
		b["messages"] = pl.openAIMessages()
	}
	if s := pl.stop(); s != nil {
		b["stop"] = s
	}
	switch pl.send {
	case "response_format":
		b["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "check", "strict": true, "schema": pl.schema}}
	case "json_object":
		b["response_format"] = map[string]any{"type": "json_object"}
	case "native":
		b["json_schema"] = pl.schema
	}
	if t := pl.c.Tool; t != nil && !completions {
		tools := make([]any, len(t.Tools))
		for i, tl := range t.Tools {
			tools[i] = map[string]any{"type": "function", "function": map[string]any{"name": tl.Name, "description": tl.Description, "parameters": pl.c.ToolParameters(i)}}
		}
		b["tools"] = tools
		if t.RoundTrip == nil {
			switch t.Choice {
			case "auto":
				b["tool_choice"] = "auto"
			case "named":
				b["tool_choice"] = map[string]any{"type": "function", "function": map[string]any{"name": t.Expect}}
			default:
				b["tool_choice"] = "required"
			}
		}
	}
	return b
}

// responsesBody is the openai-responses request (no seed, no stop: the
// API has neither).
func (pl *checkPlan) responsesBody(model string) map[string]any {
	input := make([]any, 0, len(pl.msgs)+2)
	for _, m := range pl.msgs {
		input = append(input, m)
	}
	b := map[string]any{"max_output_tokens": pl.maxToken, "temperature": 0, "stream": true, "store": false}
	if model != "" {
		b["model"] = model
	}
	switch pl.send {
	case "response_format":
		b["text"] = map[string]any{"format": map[string]any{"type": "json_schema", "name": "check", "strict": true, "schema": pl.schema}}
	case "json_object":
		b["text"] = map[string]any{"format": map[string]any{"type": "json_object"}}
	}
	if t := pl.c.Tool; t != nil {
		tools := make([]any, len(t.Tools))
		for i, tl := range t.Tools {
			tools[i] = map[string]any{"type": "function", "name": tl.Name, "description": tl.Description, "parameters": pl.c.ToolParameters(i)}
		}
		b["tools"] = tools
		if rt := t.RoundTrip; rt != nil {
			input = append(input,
				map[string]any{"type": "function_call", "call_id": roundTripCallID, "name": t.Expect, "arguments": pl.args},
				map[string]any{"type": "function_call_output", "call_id": roundTripCallID, "output": rt.Result})
		} else {
			switch t.Choice {
			case "auto":
				b["tool_choice"] = "auto"
			case "named":
				b["tool_choice"] = map[string]any{"type": "function", "name": t.Expect}
			default:
				b["tool_choice"] = "required"
			}
		}
	}
	b["input"] = input
	return b
}

// anthropicBody is the anthropic-messages request (no seed: the API has
// none; JSON is asked for in the prompt).
func (pl *checkPlan) anthropicBody(model string) map[string]any {
	b := map[string]any{"max_tokens": pl.maxToken, "temperature": 0, "stream": true}
	if model != "" {
		b["model"] = model
	}
	var system string
	msgs := make([]any, 0, len(pl.msgs)+2)
	for _, m := range pl.msgs {
		if m.Role == "system" {
			if system != "" {
				system += "\n\n"
			}
			system += m.Content
			continue
		}
		msgs = append(msgs, m)
	}
	if system != "" {
		b["system"] = system
	}
	if s := pl.stop(); s != nil {
		b["stop_sequences"] = s
	}
	if t := pl.c.Tool; t != nil {
		tools := make([]any, len(t.Tools))
		for i, tl := range t.Tools {
			tool := map[string]any{"name": tl.Name, "input_schema": pl.c.ToolParameters(i)}
			if tl.Description != "" {
				tool["description"] = tl.Description
			}
			tools[i] = tool
		}
		b["tools"] = tools
		if rt := t.RoundTrip; rt != nil {
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": roundTripCallID, "name": t.Expect, "input": json.RawMessage(pl.args)}}},
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": roundTripCallID, "content": rt.Result}}})
		} else {
			switch t.Choice {
			case "auto":
				b["tool_choice"] = map[string]any{"type": "auto"}
			case "named":
				b["tool_choice"] = map[string]any{"type": "tool", "name": t.Expect}
			default:
				b["tool_choice"] = map[string]any{"type": "any"}
			}
		}
	}
	b["messages"] = msgs
	return b
}

// checkRequest builds a check's streaming request for api.
func checkRequest(ctx context.Context, api string, base BaseURL, p Params) (*http.Request, error) {
	pl, err := newCheckPlan(api, p)
	if err != nil {
		return nil, err
	}
	switch api {
	case APIOpenAIChat:
		return postStream(ctx, api, base, "chat/completions", pl.chatBody(p.Model, false))
	case APIOpenAICompletions:
		return postStream(ctx, api, base, "completions", pl.chatBody(p.Model, true))
	case APIOpenAIResponses:
		return postStream(ctx, api, base, "responses", pl.responsesBody(p.Model))
	}
	return postStream(ctx, api, base, "messages", pl.anthropicBody(p.Model))
}
