package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The shipped checks' schema and tool (config/ examples, docs/checks.md).
var (
	shippedSchema = map[string]any{"type": "object", "properties": map[string]any{
		"name":  map[string]any{"type": "string", "const": "llmprobe"},
		"count": map[string]any{"type": "integer", "const": 3}},
		"required": []any{"name", "count"}, "additionalProperties": false}
	weatherParams = map[string]any{"type": "object", "properties": map[string]any{
		"city": map[string]any{"type": "string", "enum": []any{"Paris"}}}, "required": []any{"city"}}
)

const (
	jsonPrompt    = `Reply with a JSON object whose "name" is "llmprobe" and whose "count" is 3.`
	weatherPrompt = "What is the weather in Paris? Use the get_weather tool."
)

// libReq is a check's request, built in each API's shape.
type libReq struct {
	prompt    string
	max       int
	stop      []string
	schema    map[string]any // JSON asked for: the API's structured output (Anthropic: in the prompt)
	send      string         // with schema: "" (request field), "prompt" (the schema in the prompt), "json_object"
	tools     bool           // offer get_weather (tool_choice required / any)
	roundTrip bool           // the exchange ends with get_weather's result
}

func (q libReq) body(api, model string, stream bool) string {
	m := map[string]any{"model": model, "stream": stream}
	prompt := q.prompt
	inPrompt := q.schema != nil && (q.send != "" || api == "anthropic-messages")
	if inPrompt {
		s, _ := json.Marshal(q.schema)
		prompt += " Reply with JSON matching this JSON Schema: " + string(s)
	}
	user := map[string]any{"role": "user", "content": prompt}
	msgs := []any{user}
	switch api {
	case "openai-chat":
		if q.roundTrip {
			msgs = append(msgs, map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
				"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}},
				map[string]any{"role": "tool", "tool_call_id": "c1", "content": "18 degrees"})
		}
		m["messages"] = msgs
		m["stream_options"] = map[string]any{"include_usage": true}
		if q.tools {
			m["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": weatherParams}}}
			m["tool_choice"] = "required"
		}
	case "openai-completions":
		m["prompt"] = prompt
		m["stream_options"] = map[string]any{"include_usage": true}
	case "openai-responses":
		input := []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": prompt}}}}
		if q.roundTrip {
			input = append(input, map[string]any{"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": `{"city":"Paris"}`},
				map[string]any{"type": "function_call_output", "call_id": "c1", "output": "18 degrees"})
		}
		m["input"] = input
		if q.tools {
			m["tools"] = []any{map[string]any{"type": "function", "name": "get_weather", "parameters": weatherParams}}
			m["tool_choice"] = "required"
		}
		if q.schema != nil && !inPrompt {
			m["text"] = map[string]any{"format": map[string]any{"type": "json_schema", "name": "out", "schema": q.schema, "strict": true}}
		}
	case "anthropic-messages":
		if q.roundTrip {
			msgs = append(msgs, map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "get_weather", "input": map[string]any{"city": "Paris"}}}},
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "18 degrees"}}})
		}
		m["messages"] = msgs
		if q.tools {
			m["tools"] = []any{map[string]any{"name": "get_weather", "input_schema": weatherParams}}
			m["tool_choice"] = map[string]any{"type": "any"}
		}
		if q.stop != nil {
			m["stop_sequences"] = q.stop
		}
		m["max_tokens"] = 64
	}
	if q.max > 0 {
		key := map[string]string{"openai-responses": "max_output_tokens"}[api]
		if key == "" {
			key = "max_tokens"
		}
		m[key] = q.max
	}
	if q.stop != nil && (api == "openai-chat" || api == "openai-completions") {
		m["stop"] = q.stop
	}
	if q.schema != nil && !inPrompt && api != "openai-responses" {
		if api == "openai-completions" {
			m["json_schema"] = q.schema // llama.cpp's native field
		} else {
			m["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "out", "schema": q.schema}}
		}
	}
	if q.send == "json_object" && api != "anthropic-messages" && api != "openai-responses" {
		m["response_format"] = map[string]any{"type": "json_object"}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// want is what a check reads: the text (or, with tool, a tool call), the
// finish and the completion tokens (0: not checked beyond consistency).
type want struct {
	text, tool, args string
	finish, stopSeq  string
	model            string // "": m
	tokens           int
	brokenJSON       bool // the text must not parse as JSON
}

func countText(n int) string { return countTo(n, 0) }

func countPrompt(n int) string {
	return fmt.Sprintf("Count from 1 to %d, separated by single spaces. Reply with the numbers only.", n)
}

// libCases are the prompt library's checks: right by default, and broken
// by their wrong kind.
var libCases = []struct {
	name  string
	req   libReq
	skip  string // an API the check does not apply to
	right want
	kind  string
	wrong want
	// text is the answer under wrong text when it is not kind (the count
	// prompts of stop and length: a number skipped, the check's own
	// verdict unchanged).
	text *want
}{
	{name: "arithmetic", req: libReq{prompt: "What is 19 + 23? Reply with the number only."},
		right: want{text: "42", finish: "stop", tokens: 1}, kind: "text", wrong: want{text: "43", finish: "stop"}},
	{name: "arithmetic-negative-product", req: libReq{prompt: "what is -7 * 6?  Reply with the NUMBER only"},
		right: want{text: "-42", finish: "stop"}, kind: "text", wrong: want{text: "-41", finish: "stop"}},
	{name: "copy", req: libReq{prompt: `Repeat exactly, without quotes: "Hello, wörld "quoted""`},
		right: want{text: `Hello, wörld "quoted"`, finish: "stop"}, kind: "text", wrong: want{text: `Hello, wörld "quoted`, finish: "stop"}},
	{name: "count", req: libReq{prompt: countPrompt(10)},
		right: want{text: countText(10), finish: "stop", tokens: 10}, kind: "text", wrong: want{text: "1 3 4 5 6 7 8 9 10", finish: "stop", tokens: 9}},
	{name: "stop", req: libReq{prompt: countPrompt(10), stop: []string{" 6", "zzz"}}, skip: "openai-responses",
		right: want{text: "1 2 3 4 5", finish: "stop", tokens: 5}, kind: "stop", wrong: want{text: countText(10), finish: "stop", tokens: 10},
		text: &want{text: "1 3 4 5", finish: "stop", tokens: 4}},
	{name: "length", req: libReq{prompt: countPrompt(50), max: 5},
		right: want{text: "1 2 3 4 5", finish: "length", tokens: 5}, kind: "length", wrong: want{text: countText(50), finish: "stop", tokens: 50},
		text: &want{text: "1 3 4 5 6", finish: "length", tokens: 5}},
	{name: "json", req: libReq{prompt: jsonPrompt, schema: shippedSchema},
		right: want{text: `{"count":3,"name":"llmprobe"}`, finish: "stop", tokens: 8}, kind: "json", wrong: want{text: `{"count":3,"na`, brokenJSON: true, finish: "stop"}},
	{name: "json-in-prompt", req: libReq{prompt: jsonPrompt, schema: shippedSchema, send: "prompt"},
		right: want{text: `{"count":3,"name":"llmprobe"}`, finish: "stop"}, kind: "json", wrong: want{text: `{"count":3,"na`, brokenJSON: true, finish: "stop"}},
	{name: "json-object", req: libReq{prompt: jsonPrompt, schema: shippedSchema, send: "json_object"},
		right: want{text: `{"count":3,"name":"llmprobe"}`, finish: "stop"}, kind: "json", wrong: want{text: `{"count":3,"na`, brokenJSON: true, finish: "stop"}},
	{name: "tool", req: libReq{prompt: weatherPrompt, tools: true}, skip: "openai-completions",
		right: want{tool: "get_weather", args: `{"city":"Paris"}`, finish: "tool_calls", tokens: 4}, kind: "tool_call",
		wrong: want{text: "I will answer without calling a tool.", finish: "stop"}},
	{name: "round-trip", req: libReq{prompt: weatherPrompt, tools: true, roundTrip: true}, skip: "openai-completions",
		right: want{text: "The tool said: 18 degrees", finish: "stop"}, kind: "tool_call", wrong: want{text: "The tool said nothing.", finish: "stop"}},
}

// kindServers starts a right simulator ("") and one per wrong kind.
func kindServers(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range append([]string{""}, WrongAnswerKinds()...) {
		cfg := testConfig()
		if k != "" {
			cfg.WrongAnswers = []string{k}
		}
		_, out[k] = startServer(t, cfg)
	}
	return out
}

// ask sends one library request and reads what a client hears.
func askSim(t *testing.T, c *http.Client, base string, ac apiCase, body string, stream bool) heard {
	t.Helper()
	resp := post(t, c, base+ac.path, body, nil)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if stream {
		return decodeHeard(t, ac.name, readSSE(t, resp.Body), nil)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return decodeHeard(t, ac.name, nil, b)
}

// TestLibraryAnswers: every library check, in every API that takes it,
// streamed and not: right by default, broken by its wrong kind (and only by
// it: the other kinds leave it right).
func TestLibraryAnswers(t *testing.T) {
	servers := kindServers(t)
	c := testClient(t)
	for _, lc := range libCases {
		for _, ac := range apiCases {
			if ac.name == lc.skip {
				continue
			}
			for _, kind := range append([]string{""}, WrongAnswerKinds()...) {
				w := lc.right
				if kind == lc.kind {
					w = lc.wrong
				}
				if kind == "text" && lc.text != nil {
					w = *lc.text
				}
				if kind == "model" {
					w.model = "m-other"
				}
				if lc.name == "stop" && kind != "stop" && ac.name == "anthropic-messages" {
					w.stopSeq = " 6" // stop_reason stop_sequence
				}
				for _, stream := range []bool{true, false} {
					t.Run(fmt.Sprintf("%s/%s/wrong=%s/stream=%t", lc.name, ac.name, kind, stream), func(t *testing.T) {
						h := askSim(t, c, servers[kind], ac, lc.req.body(ac.name, "m", stream), stream)
						checkHeard(t, ac.name, h, w, stream)
					})
				}
			}
		}
	}
}

func checkHeard(t *testing.T, api string, h heard, w want, stream bool) {
	t.Helper()
	if !h.done {
		t.Errorf("no end of stream")
	}
	if h.text != w.text || h.tool != w.tool || h.args != w.args {
		t.Errorf("heard text %q tool %q args %q, want %q %q %q", h.text, h.tool, h.args, w.text, w.tool, w.args)
	}
	if w.tool != "" && h.toolID == "" {
		t.Errorf("tool call without an id")
	}
	if h.finish != w.finish {
		t.Errorf("finish %q, want %q", h.finish, w.finish)
	}
	if w.tokens > 0 && h.completion != w.tokens {
		t.Errorf("completion tokens %d, want %d", h.completion, w.tokens)
	}
	if h.completion < 1 {
		t.Errorf("completion tokens %d", h.completion)
	}
	if stream && h.pieces != h.completion { // one token per chunk in testConfig
		t.Errorf("%d pieces streamed, usage says %d tokens", h.pieces, h.completion)
	}
	if !stream && h.completion != newAnswer(w.text+w.args, "", "").tokens() {
		t.Errorf("usage %d tokens for %q", h.completion, w.text+w.args)
	}
	var v any
	if w.brokenJSON == (json.Unmarshal([]byte(h.text), &v) == nil) && strings.HasPrefix(w.text, "{") {
		t.Errorf("JSON %q: broken %t, want broken %t", h.text, !w.brokenJSON, w.brokenJSON)
	}
	if h.stopSeq != w.stopSeq {
		t.Errorf("stop_sequence %q, want %q", h.stopSeq, w.stopSeq)
	}
	wantModel, wantFP := "m", simFingerprint
	if w.model != "" {
		wantModel, wantFP = w.model, otherFingerprint
	}
	if api != "openai-chat" {
		wantFP = ""
	}
	if h.model != wantModel || h.fingerprint != wantFP {
		t.Errorf("model %q system_fingerprint %q, want %q %q", h.model, h.fingerprint, wantModel, wantFP)
	}
}

// TestLibraryAnswersInChunks: with several tokens per chunk and reasoning
// configured, a library answer is the same text, in fewer chunks, with no
// reasoning, and usage still counts its tokens.
func TestLibraryAnswersInChunks(t *testing.T) {
	cfg := testConfig()
	cfg.TokensPerChunk = 3
	cfg.ReasoningTokens = FixedDist(4)
	_, base := startServer(t, cfg)
	c := testClient(t)
	for _, lc := range []struct {
		req  libReq
		want want
	}{
		{libReq{prompt: countPrompt(10)}, want{text: countText(10), finish: "stop", tokens: 10}},
		{libReq{prompt: weatherPrompt, tools: true}, want{tool: "get_weather", args: `{"city":"Paris"}`, finish: "tool_calls", tokens: 4}},
	} {
		for _, ac := range apiCases {
			if lc.req.tools && ac.name == "openai-completions" {
				continue
			}
			t.Run(ac.name, func(t *testing.T) {
				h := askSim(t, c, base, ac, lc.req.body(ac.name, "m", true), true)
				if h.text != lc.want.text || h.tool != lc.want.tool || h.args != lc.want.args || h.finish != lc.want.finish || h.completion != lc.want.tokens {
					t.Errorf("heard %+v, want %+v", h, lc.want)
				}
				if wantPieces := (lc.want.tokens + 2) / 3; h.pieces != wantPieces {
					t.Errorf("%d chunks, want %d", h.pieces, wantPieces)
				}
			})
		}
	}
}
