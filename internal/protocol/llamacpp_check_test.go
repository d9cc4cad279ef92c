package protocol

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// shippedJSONSchema and shippedTool are the prompt library's (the shared
// design): what config/ ships and the simulator recognises.
var (
	shippedJSONSchema = map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":  map[string]any{"type": "string", "const": "llmprobe"},
			"count": map[string]any{"type": "integer", "const": 3},
		},
		"required":             []any{"name", "count"},
		"additionalProperties": false,
	}
	shippedTool = answercheck.Tool{Name: "get_weather", Description: "The weather in a city.", Parameters: map[string]any{
		"type":       "object",
		"properties": map[string]any{"city": map[string]any{"type": "string", "enum": []any{"Paris"}}},
		"required":   []any{"city"},
	}}
)

const shippedJSONPrompt = `Reply with a JSON object whose "name" is "llmprobe" and whose "count" is 3.`

func jsonCheck(t testing.TB, send string) *answercheck.Check {
	c := &answercheck.Check{Name: "json-" + send, Prompt: shippedJSONPrompt, JSON: &answercheck.JSONCheck{Schema: shippedJSONSchema, Send: send}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func toolCheck(t testing.TB) *answercheck.Check {
	c := &answercheck.Check{Name: "tool", Prompt: "What is the weather in Paris? Use the get_weather tool.",
		Tool: &answercheck.ToolCheck{Tools: []answercheck.Tool{shippedTool}, Expect: "get_weather"}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLlamaCppCheckOutcomes (issue 29): the four outcomes measured against
// the real engine (tiny random model, --jinja) classify as they are:
// llama.cpp's native json_schema on openai-completions (/v1/completions)
// constrains the sampler and the answer passes the json check; chat with
// response_format json_object is not constrained and the free text fails
// invalid_json; chat with response_format json_schema is refused with a
// 400 (http_error, not judged); chat with tools and tool_choice required
// answers text, no tool call (no_tool_call). The other kinds are
// classified as the engine behaves too: stop sequences and max_tokens are
// honoured (but Responses reports no cut), the model and fingerprint are
// llama.cpp's, no API gets a tool call from the tiny model.
func TestLlamaCppCheckOutcomes(t *testing.T) {
	base := testutil.StartLlamaCpp(t, "--jinja").URL() + "/v1"
	c, err := NewClient(ClientOptions{Timeouts: Timeouts{Total: 60 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	l := ledger.New(time.Now())
	for _, tc := range []struct {
		name    string
		a       Adapter
		check   *answercheck.Check
		outcome ledger.Outcome
		result  answercheck.Result
		reason  answercheck.Reason
	}{
		{"native json_schema on completions", OpenAICompletions{}, jsonCheck(t, "native"), ledger.OK, answercheck.Pass, ""},
		{"chat json_object", OpenAIChat{}, jsonCheck(t, "json_object"), ledger.OK, answercheck.Fail, answercheck.InvalidJSON},
		{"chat response_format json_schema", OpenAIChat{}, jsonCheck(t, "response_format"), ledger.HTTPError, answercheck.NotJudged, ""},
		{"chat tools required", OpenAIChat{}, toolCheck(t), ledger.OK, answercheck.Fail, answercheck.NoToolCall},
		// Beyond the four: what the engine does with the other kinds.
		{"responses tools required", OpenAIResponses{}, toolCheck(t), ledger.OK, answercheck.Fail, answercheck.NoToolCall},
		{"anthropic tools any", AnthropicMessages{}, toolCheck(t), ledger.OK, answercheck.Fail, answercheck.NoToolCall},
		{"chat length", OpenAIChat{}, lengthCheck(t), ledger.OK, answercheck.Pass, ""},
		{"completions length", OpenAICompletions{}, lengthCheck(t), ledger.OK, answercheck.Pass, ""},
		// This llama.cpp ends a Responses stream cut at max_output_tokens
		// with response.completed (status completed), not OpenAI's
		// response.incomplete (reason max_output_tokens): the check says so.
		{"responses length", OpenAIResponses{}, lengthCheck(t), ledger.OK, answercheck.Fail, answercheck.LengthIgnored},
		{"anthropic length", AnthropicMessages{}, lengthCheck(t), ledger.OK, answercheck.Pass, ""},
		{"chat stop", OpenAIChat{}, stopCheck(t), ledger.OK, answercheck.Pass, ""},
		{"completions stop", OpenAICompletions{}, stopCheck(t), ledger.OK, answercheck.Pass, ""},
		{"anthropic stop", AnthropicMessages{}, stopCheck(t), ledger.OK, answercheck.Pass, ""},
		{"chat model and fingerprint", OpenAIChat{}, modelCheck(t, "tiny", "b0-e95dae18d"), ledger.OK, answercheck.Pass, ""},
		{"chat another model", OpenAIChat{}, modelCheck(t, "llama-3-70b", ""), ledger.OK, answercheck.Fail, answercheck.WrongModel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := l.Plan(ledger.Meta{Target: "llama.cpp"}, l.Now())
			p := Params{Model: "tiny", Check: tc.check, RecordExcerpt: true}
			res := c.Do(context.Background(), Target{Base: base, Adapter: tc.a}, p, rec, l.Now, func() { l.MarkDispatched(rec) })
			if err := l.Finish(rec, res.Outcome, res.Reason, res.Err); err != nil {
				t.Fatal(err)
			}
			cr := rec.Check
			if cr == nil {
				t.Fatal("no check record")
			}
			t.Logf("outcome %s/%s (%s), check %+v", res.Outcome, res.Reason, res.Err, *cr)
			if res.Outcome != tc.outcome || cr.Result != tc.result || cr.Reason != tc.reason {
				t.Fatalf("outcome %s, check %s/%s; want %s, %s/%s", res.Outcome, cr.Result, cr.Reason, tc.outcome, tc.result, tc.reason)
			}
			if cr.Name != tc.check.Name || cr.Kind != tc.check.Kind() {
				t.Errorf("check record names %s/%s", cr.Name, cr.Kind)
			}
			judged := cr.Result != answercheck.NotJudged
			if judged != (len(cr.AnswerSHA256) == 64) || judged != (cr.Excerpt != "") {
				t.Errorf("judged %v but hash %q, excerpt %q", judged, cr.AnswerSHA256, cr.Excerpt)
			}
			if len(cr.Excerpt) > answercheck.MaxExcerptBytes {
				t.Errorf("excerpt of %d bytes", len(cr.Excerpt))
			}
			if cr.Excerpt != "" && strings.Contains(res.Err, cr.Excerpt) {
				t.Error("the answer reached the error text")
			}
		})
	}
}

func lengthCheck(t testing.TB) *answercheck.Check {
	return validCheck(t, answercheck.Check{Name: "length", MaxTokens: 5, Length: &answercheck.Length{}})
}

// stopCheck stops at "e": 64 random tokens all but surely hold one, and
// a server that honours stop sequences never shows it.
func stopCheck(t testing.TB) *answercheck.Check {
	return validCheck(t, answercheck.Check{Name: "stop", Stop: &answercheck.StopCheck{Sequences: []string{"e"}}})
}

func modelCheck(t testing.TB, name, fp string) *answercheck.Check {
	return validCheck(t, answercheck.Check{Name: "model", Model: &answercheck.Model{Name: name, SystemFingerprint: fp}})
}
