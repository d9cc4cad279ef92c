package protocol

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/answercheck"
)

func validCheck(t testing.TB, c answercheck.Check) *answercheck.Check {
	t.Helper()
	if c.Name == "" {
		c.Name = "c"
	}
	if c.Prompt == "" && len(c.Messages) == 0 {
		c.Prompt = "Count from 1 to 50, separated by single spaces. Reply with the numbers only."
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return &c
}

// checkBody builds api's request for c and returns its path and its body,
// decoded.
func checkBody(t *testing.T, api string, c *answercheck.Check) (string, map[string]any) {
	t.Helper()
	a, err := Lookup(api)
	if err != nil {
		t.Fatal(err)
	}
	req, err := a.NewRequest(context.Background(), "http://127.0.0.1:1/v1", Params{Model: "m", Messages: []Message{{Role: "user", Content: "class prompt"}}, MaxTokens: 999, Check: c})
	if err != nil {
		t.Fatalf("%s: NewRequest: %v", api, err)
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "class prompt") || strings.Contains(string(b), "999") {
		t.Errorf("%s: the class's prompt or max_tokens leaked into a check request: %s", api, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: body is not JSON: %v", api, err)
	}
	return req.URL.Path, m
}

// at reads a path of member names and array indices ("messages.0.role").
func at(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i := 0
			for _, c := range k {
				i = i*10 + int(c-'0')
			}
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func js(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}

// TestCheckRequestShapes: each API's check request, member by member
// (docs/protocols.md "Check requests").
func TestCheckRequestShapes(t *testing.T) {
	schema := `{"additionalProperties":false,"properties":{"count":{"const":3,"type":"integer"},"name":{"const":"llmprobe","type":"string"}},"required":["name","count"],"type":"object"}`
	params := `{"properties":{"city":{"enum":["Paris"],"type":"string"}},"required":["city"],"type":"object"}`
	stop := validCheck(t, answercheck.Check{Seed: 7, MaxTokens: 20, Stop: &answercheck.StopCheck{Sequences: []string{" 6"}}})
	length := validCheck(t, answercheck.Check{MaxTokens: 5, Length: &answercheck.Length{}})
	multi := validCheck(t, answercheck.Check{Messages: []answercheck.Message{{Role: "system", Content: "Be terse."}, {Role: "user", Content: "Q"}}, Expect: &answercheck.Expect{Text: "A"}})
	jsonFor := func(send string) *answercheck.Check { return jsonCheck(t, send) }
	tool := toolCheck(t)
	named := toolCheck(t)
	named.Tool.Choice = "named"
	auto := toolCheck(t)
	auto.Tool.Choice = "auto"
	round := validCheck(t, answercheck.Check{Prompt: "What is the weather in Paris? Use the get_weather tool.", Tool: &answercheck.ToolCheck{
		Tools: []answercheck.Tool{shippedTool}, Expect: "get_weather",
		RoundTrip: &answercheck.RoundTrip{Arguments: map[string]any{"city": "Paris"}, Result: "18 degrees", Expect: answercheck.Expect{Regex: "18"}}}})
	inPrompt := func(s string) bool { return strings.HasSuffix(s, "matching this JSON Schema: "+schema) }
	type want map[string]any // path → value (nil: absent); a func(any) bool tests it
	for _, tc := range []struct {
		api, path string
		c         *answercheck.Check
		want      want
	}{
		{APIOpenAIChat, "/v1/chat/completions", stop, want{"temperature": 0.0, "seed": 7.0, "max_tokens": 20.0, "stop": js(`[" 6"]`), "stream": true,
			"stream_options.include_usage": true, "messages.0.role": "user", "model": "m", "response_format": nil, "tools": nil}},
		{APIOpenAIChat, "", length, want{"max_tokens": 5.0, "seed": 0.0, "stop": nil}},
		{APIOpenAIChat, "", multi, want{"max_tokens": float64(answercheck.DefaultMaxTokens), "messages.0.role": "system", "messages.1.content": "Q"}},
		{APIOpenAIChat, "", jsonFor("response_format"), want{"response_format": js(`{"type":"json_schema","json_schema":{"name":"check","strict":true,"schema":` + schema + `}}`),
			"messages.0.content": shippedJSONPrompt, "json_schema": nil}},
		{APIOpenAIChat, "", jsonFor("json_object"), want{"response_format": js(`{"type":"json_object"}`), "messages.0.content": inPrompt}},
		{APIOpenAIChat, "", jsonFor("native"), want{"json_schema": js(schema), "response_format": nil, "messages.0.content": shippedJSONPrompt}},
		{APIOpenAIChat, "", jsonFor("prompt"), want{"json_schema": nil, "response_format": nil, "messages.0.content": inPrompt}},
		{APIOpenAIChat, "", tool, want{"tools": js(`[{"type":"function","function":{"name":"get_weather","description":"The weather in a city.","parameters":` + params + `}}]`), "tool_choice": "required"}},
		{APIOpenAIChat, "", named, want{"tool_choice": js(`{"type":"function","function":{"name":"get_weather"}}`)}},
		{APIOpenAIChat, "", auto, want{"tool_choice": "auto"}},
		{APIOpenAIChat, "", round, want{"tool_choice": nil, "messages.1": js(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_llmprobe_0","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`),
			"messages.2": js(`{"role":"tool","tool_call_id":"call_llmprobe_0","content":"18 degrees"}`)}},

		{APIOpenAICompletions, "/v1/completions", stop, want{"temperature": 0.0, "seed": 7.0, "max_tokens": 20.0, "stop": js(`[" 6"]`), "stream": true,
			"prompt": stop.Prompt, "messages": nil}},
		{APIOpenAICompletions, "", multi, want{"prompt": "Be terse.\n\nQ"}},
		{APIOpenAICompletions, "", jsonFor("native"), want{"json_schema": js(schema), "response_format": nil, "prompt": shippedJSONPrompt}},
		{APIOpenAICompletions, "", jsonFor("response_format"), want{"response_format.type": "json_schema", "json_schema": nil}},
		{APIOpenAICompletions, "", jsonFor("prompt"), want{"prompt": inPrompt}},

		{APIOpenAIResponses, "/v1/responses", length, want{"temperature": 0.0, "seed": nil, "max_output_tokens": 5.0, "stream": true, "store": false,
			"input.0.role": "user", "max_tokens": nil, "stop": nil}},
		{APIOpenAIResponses, "", jsonFor("response_format"), want{"text": js(`{"format":{"type":"json_schema","name":"check","strict":true,"schema":` + schema + `}}`)}},
		{APIOpenAIResponses, "", jsonFor("json_object"), want{"text": js(`{"format":{"type":"json_object"}}`), "input.0.content": inPrompt}},
		{APIOpenAIResponses, "", tool, want{"tools": js(`[{"type":"function","name":"get_weather","description":"The weather in a city.","parameters":` + params + `}]`), "tool_choice": "required"}},
		{APIOpenAIResponses, "", named, want{"tool_choice": js(`{"type":"function","name":"get_weather"}`)}},
		{APIOpenAIResponses, "", round, want{"tool_choice": nil,
			"input.1": js(`{"type":"function_call","call_id":"call_llmprobe_0","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}`),
			"input.2": js(`{"type":"function_call_output","call_id":"call_llmprobe_0","output":"18 degrees"}`)}},

		{APIAnthropicMessages, "/v1/messages", stop, want{"temperature": 0.0, "seed": nil, "max_tokens": 20.0, "stop_sequences": js(`[" 6"]`), "stop": nil, "stream": true}},
		{APIAnthropicMessages, "", multi, want{"system": "Be terse.", "messages.0.content": "Q", "messages.1": nil}},
		{APIAnthropicMessages, "", jsonFor("response_format"), want{"messages.0.content": inPrompt, "response_format": nil}},
		{APIAnthropicMessages, "", tool, want{"tools": js(`[{"name":"get_weather","description":"The weather in a city.","input_schema":` + params + `}]`), "tool_choice": js(`{"type":"any"}`)}},
		{APIAnthropicMessages, "", named, want{"tool_choice": js(`{"type":"tool","name":"get_weather"}`)}},
		{APIAnthropicMessages, "", auto, want{"tool_choice": js(`{"type":"auto"}`)}},
		{APIAnthropicMessages, "", round, want{"tool_choice": nil,
			"messages.1": js(`{"role":"assistant","content":[{"type":"tool_use","id":"call_llmprobe_0","name":"get_weather","input":{"city":"Paris"}}]}`),
			"messages.2": js(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_llmprobe_0","content":"18 degrees"}]}`)}},
	} {
		path, body := checkBody(t, tc.api, tc.c)
		if tc.path != "" && path != tc.path {
			t.Errorf("%s %s: path %s, want %s", tc.api, tc.c.Name, path, tc.path)
		}
		for k, w := range tc.want {
			got := at(body, k)
			if f, ok := w.(func(string) bool); ok {
				if s, _ := got.(string); !f(s) {
					t.Errorf("%s %s: %s = %v", tc.api, tc.c.Name, k, got)
				}
				continue
			}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("%s %s: %s = %#v, want %#v", tc.api, tc.c.Name, k, got, w)
			}
		}
	}
}

// TestCheckSupported: what an API cannot express is refused by name, and
// refused again when a request is built anyway.
func TestCheckSupported(t *testing.T) {
	tool, stop := toolCheck(t), validCheck(t, answercheck.Check{Stop: &answercheck.StopCheck{Sequences: []string{"x"}}})
	for _, tc := range []struct {
		api  string
		c    *answercheck.Check
		want string // "" supported
	}{
		{APIOpenAICompletions, tool, "tool_call:"},
		{APIOpenAIResponses, stop, "stop:"},
		{APIOpenAIResponses, jsonCheck(t, "native"), "json.send:"},
		{APIAnthropicMessages, jsonCheck(t, "native"), "json.send:"},
		{APIAnthropicMessages, jsonCheck(t, "json_object"), "json.send:"},
		{"openai-other", stop, "unknown api"},
		{APIOpenAIChat, tool, ""},
		{APIOpenAIChat, stop, ""},
		{APIOpenAIChat, jsonCheck(t, "native"), ""},
		{APIOpenAICompletions, jsonCheck(t, "native"), ""},
		{APIOpenAIResponses, tool, ""},
		{APIAnthropicMessages, tool, ""},
		{APIAnthropicMessages, stop, ""},
		{APIAnthropicMessages, jsonCheck(t, "response_format"), ""},
	} {
		err := CheckSupported(tc.api, tc.c)
		if (tc.want == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("CheckSupported(%s, %s) = %v, want %q", tc.api, tc.c.Name, err, tc.want)
		}
		if a, lerr := Lookup(tc.api); lerr == nil && err != nil {
			if _, rerr := a.NewRequest(context.Background(), "http://127.0.0.1:1/v1", Params{Check: tc.c}); rerr == nil {
				t.Errorf("%s built a request for %s", tc.api, tc.c.Name)
			}
		}
	}
}
