package answercheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func num(v float64) *float64 { return &v }

var shippedSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":  map[string]any{"type": "string", "const": "llmprobe"},
		"count": map[string]any{"type": "integer", "const": 3},
	},
	"required":             []any{"name", "count"},
	"additionalProperties": false,
}

var weather = Tool{Name: "get_weather", Parameters: map[string]any{
	"type":       "object",
	"properties": map[string]any{"city": map[string]any{"type": "string", "enum": []any{"Paris"}}},
	"required":   []any{"city"},
}}

func valid(t *testing.T, c Check) *Check {
	t.Helper()
	if c.Name == "" {
		c.Name = "c"
	}
	if c.Prompt == "" && len(c.Messages) == 0 {
		c.Prompt = "p"
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return &c
}

// TestJudge: every kind, every reason, and the rules (case, whitespace,
// tolerance, fences, empty arguments, usage unknown).
func TestJudge(t *testing.T) {
	stop := Check{Stop: &StopCheck{Sequences: []string{" 6"}}}
	tool := Check{Tool: &ToolCheck{Tools: []Tool{{Name: "other", Parameters: map[string]any{"type": "object"}}, weather}, Expect: "get_weather"}}
	length := Check{MaxTokens: 5, Length: &Length{}}
	for _, tc := range []struct {
		name  string
		check Check
		a     Answer
		want  Verdict
	}{
		{"text exact", Check{Expect: &Expect{Text: "42"}}, Answer{Text: " 42\n"}, Verdict{Result: Pass}},
		{"text mismatch", Check{Expect: &Expect{Text: "42"}}, Answer{Text: "43"}, Verdict{Fail, Mismatch}},
		{"text case sensitive", Check{Expect: &Expect{Text: "Paris"}}, Answer{Text: "paris"}, Verdict{Fail, Mismatch}},
		{"text case insensitive", Check{Expect: &Expect{Text: "Paris", Case: "insensitive"}}, Answer{Text: "PARIS"}, Verdict{Result: Pass}},
		{"whitespace exact", Check{Expect: &Expect{Text: "42", Whitespace: "exact"}}, Answer{Text: " 42"}, Verdict{Fail, Mismatch}},
		{"whitespace trim keeps inner", Check{Expect: &Expect{Text: "1 2 3"}}, Answer{Text: "1  2 3"}, Verdict{Fail, Mismatch}},
		{"whitespace collapse", Check{Expect: &Expect{Text: "1 2 3", Whitespace: "collapse"}}, Answer{Text: " 1 \n2\t 3 "}, Verdict{Result: Pass}},
		{"regex", Check{Expect: &Expect{Regex: `\b18\b`}}, Answer{Text: "The tool said: 18 degrees"}, Verdict{Result: Pass}},
		{"regex mismatch", Check{Expect: &Expect{Regex: `^18$`}}, Answer{Text: "118"}, Verdict{Fail, Mismatch}},
		{"regex insensitive", Check{Expect: &Expect{Regex: `^paris$`, Case: "insensitive"}}, Answer{Text: "Paris\n"}, Verdict{Result: Pass}},
		{"number", Check{Expect: &Expect{Number: num(-7)}}, Answer{Text: "-7"}, Verdict{Result: Pass}},
		{"number full stop", Check{Expect: &Expect{Number: num(42)}}, Answer{Text: "42."}, Verdict{Result: Pass}},
		{"number tolerance", Check{Expect: &Expect{Number: num(3.14), Tolerance: 0.01}}, Answer{Text: "3.141"}, Verdict{Result: Pass}},
		{"number off", Check{Expect: &Expect{Number: num(42)}}, Answer{Text: "43"}, Verdict{Fail, Mismatch}},
		{"number words", Check{Expect: &Expect{Number: num(42)}}, Answer{Text: "42 is the answer"}, Verdict{Fail, Mismatch}},
		{"number NaN", Check{Expect: &Expect{Number: num(0), Tolerance: 1}}, Answer{Text: "NaN"}, Verdict{Fail, Mismatch}},
		{"number hex", Check{Expect: &Expect{Number: num(16)}}, Answer{Text: "0x10"}, Verdict{Fail, Mismatch}},
		{"one_of", Check{Expect: &Expect{OneOf: []string{"yes", "Yes."}}}, Answer{Text: "Yes."}, Verdict{Result: Pass}},
		{"one_of none", Check{Expect: &Expect{OneOf: []string{"yes"}}}, Answer{Text: "no"}, Verdict{Fail, Mismatch}},
		{"json pass", Check{JSON: &JSONCheck{Schema: shippedSchema}}, Answer{Text: `{"name": "llmprobe", "count": 3 } `}, Verdict{Result: Pass}},
		{"json fenced", Check{JSON: &JSONCheck{Schema: shippedSchema}}, Answer{Text: "```json\n{\"name\":\"llmprobe\",\"count\":3}\n```"}, Verdict{Result: Pass}},
		{"json other fence", Check{JSON: &JSONCheck{Schema: shippedSchema}}, Answer{Text: "```python\n{\"name\":\"llmprobe\",\"count\":3}\n```"}, Verdict{Fail, InvalidJSON}},
		{"json free text", Check{JSON: &JSONCheck{Schema: shippedSchema}}, Answer{Text: " PublishDr秋 topological"}, Verdict{Fail, InvalidJSON}},
		{"json cut", Check{JSON: &JSONCheck{Schema: shippedSchema}}, Answer{Text: `{"name": "llm`}, Verdict{Fail, InvalidJSON}},
		{"json two values", Check{JSON: &JSONCheck{Schema: shippedSchema}}, Answer{Text: `{} {}`}, Verdict{Fail, InvalidJSON}},
		{"json empty", Check{JSON: &JSONCheck{Schema: shippedSchema}}, Answer{}, Verdict{Fail, InvalidJSON}},
		{"json schema", Check{JSON: &JSONCheck{Schema: shippedSchema}}, Answer{Text: `{"a":6500000000000000}`}, Verdict{Fail, Schema}},
		{"json wrong const", Check{JSON: &JSONCheck{Schema: shippedSchema}}, Answer{Text: `{"name":"llmprobe","count":4}`}, Verdict{Fail, Schema}},
		{"tool pass", tool, Answer{ToolCalls: []ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}, Verdict{Result: Pass}},
		{"tool among others", tool, Answer{ToolCalls: []ToolCall{{Name: "other"}, {Name: "get_weather", Arguments: `{"city":"Paris"}`}}}, Verdict{Result: Pass}},
		{"no tool call", tool, Answer{Text: "It is sunny."}, Verdict{Fail, NoToolCall}},
		{"wrong tool", tool, Answer{ToolCalls: []ToolCall{{Name: "other", Arguments: "{}"}}}, Verdict{Fail, WrongTool}},
		{"bad arguments schema", tool, Answer{ToolCalls: []ToolCall{{Name: "get_weather", Arguments: `{"city":"Rome"}`}}}, Verdict{Fail, BadArguments}},
		{"bad arguments json", tool, Answer{ToolCalls: []ToolCall{{Name: "get_weather", Arguments: `{"city":`}}}, Verdict{Fail, BadArguments}},
		{"empty arguments are {}", tool, Answer{ToolCalls: []ToolCall{{Name: "get_weather"}}}, Verdict{Fail, BadArguments}},
		{"round trip", Check{Tool: &ToolCheck{Tools: []Tool{weather}, Expect: "get_weather", RoundTrip: &RoundTrip{Result: "18 degrees", Expect: Expect{Regex: "18"}}}},
			Answer{Text: "The tool said: 18 degrees"}, Verdict{Result: Pass}},
		{"round trip calls again", Check{Tool: &ToolCheck{Tools: []Tool{weather}, Expect: "get_weather", RoundTrip: &RoundTrip{Result: "18 degrees", Expect: Expect{Regex: "18"}}}},
			Answer{ToolCalls: []ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}, Verdict{Fail, Mismatch}},
		{"stop honoured", stop, Answer{Text: "1 2 3 4 5"}, Verdict{Result: Pass}},
		{"stop ignored", stop, Answer{Text: "1 2 3 4 5 6 7"}, Verdict{Fail, StopIgnored}},
		{"length", length, Answer{FinishReason: "length", OutputTokens: 5, OutputTokensKnown: true}, Verdict{Result: Pass}},
		{"length anthropic", length, Answer{FinishReason: "max_tokens", OutputTokens: 5, OutputTokensKnown: true}, Verdict{Result: Pass}},
		{"length usage unknown", length, Answer{FinishReason: "max_output_tokens"}, Verdict{Result: Pass}},
		{"length ran past", length, Answer{FinishReason: "stop", OutputTokens: 9, OutputTokensKnown: true}, Verdict{Fail, LengthIgnored}},
		{"length early", length, Answer{FinishReason: "length", OutputTokens: 4, OutputTokensKnown: true}, Verdict{Fail, LengthIgnored}},
		{"length default max", Check{Length: &Length{}}, Answer{FinishReason: "length", OutputTokens: DefaultMaxTokens, OutputTokensKnown: true}, Verdict{Result: Pass}},
		{"model", Check{Model: &Model{Name: "tiny", SystemFingerprint: "b0-e95dae18d"}}, Answer{Model: "tiny", SystemFingerprint: "b0-e95dae18d"}, Verdict{Result: Pass}},
		{"model name", Check{Model: &Model{Name: "tiny"}}, Answer{Model: "tiny-other"}, Verdict{Fail, WrongModel}},
		{"model fingerprint", Check{Model: &Model{Name: "tiny", SystemFingerprint: "fp1"}}, Answer{Model: "tiny", SystemFingerprint: "fp2"}, Verdict{Fail, WrongModel}},
		{"model fingerprint absent", Check{Model: &Model{Name: "tiny", SystemFingerprint: "fp1"}}, Answer{Model: "tiny"}, Verdict{Fail, WrongModel}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := valid(t, tc.check)
			if got := c.Judge(tc.a); got != tc.want {
				t.Errorf("Judge = %+v, want %+v", got, tc.want)
			}
			// A copy that was never validated judges the same.
			cp := *c
			cp.compiled = nil
			if got := cp.Judge(tc.a); got != tc.want {
				t.Errorf("Judge unvalidated = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestJudgeInvalidCheck(t *testing.T) {
	c := &Check{Name: "x", Prompt: "p", Expect: &Expect{Regex: "("}}
	if v := c.Judge(Answer{Text: "("}); v.Result != NotJudged {
		t.Errorf("invalid check judged %+v, want not_judged", v)
	}
}

// TestValidate: each error names its key.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.json"), []byte(`{"type":"object","required":["a"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"type":12}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ex := &Expect{Text: "x"}
	for _, tc := range []struct {
		name string
		c    Check
		want string // error prefix; "" valid
	}{
		{"ok", Check{Name: "n", Prompt: "p", Expect: ex}, ""},
		{"no name", Check{Prompt: "p", Expect: ex}, "name:"},
		{"no prompt", Check{Name: "n", Expect: ex}, "prompt:"},
		{"both prompts", Check{Name: "n", Prompt: "p", Messages: []Message{{Role: "user", Content: "q"}}, Expect: ex}, "prompt and messages"},
		{"bad role", Check{Name: "n", Messages: []Message{{Role: "tool", Content: "q"}}, Expect: ex}, "messages[0].role:"},
		{"last not user", Check{Name: "n", Messages: []Message{{Role: "user", Content: "q"}, {Role: "assistant", Content: "a"}}, Expect: ex}, "messages[1].role:"},
		{"empty content", Check{Name: "n", Messages: []Message{{Role: "user"}}, Expect: ex}, "messages[0].content:"},
		{"max_tokens big", Check{Name: "n", Prompt: "p", MaxTokens: MaxMaxTokens + 1, Expect: ex}, "max_tokens:"},
		{"max_tokens negative", Check{Name: "n", Prompt: "p", MaxTokens: -1, Expect: ex}, "max_tokens:"},
		{"no kind", Check{Name: "n", Prompt: "p"}, "a check has exactly one"},
		{"two kinds", Check{Name: "n", Prompt: "p", Expect: ex, Length: &Length{}}, "a check has exactly one"},
		{"expect empty", Check{Name: "n", Prompt: "p", Expect: &Expect{}}, "expect: exactly one"},
		{"expect two", Check{Name: "n", Prompt: "p", Expect: &Expect{Text: "a", Regex: "b"}}, "expect: exactly one"},
		{"regex", Check{Name: "n", Prompt: "p", Expect: &Expect{Regex: "(a"}}, "expect.regex:"},
		{"case", Check{Name: "n", Prompt: "p", Expect: &Expect{Text: "a", Case: "upper"}}, "expect.case:"},
		{"whitespace", Check{Name: "n", Prompt: "p", Expect: &Expect{Text: "a", Whitespace: "squash"}}, "expect.whitespace:"},
		{"tolerance without number", Check{Name: "n", Prompt: "p", Expect: &Expect{Text: "a", Tolerance: 1}}, "expect.tolerance:"},
		{"negative tolerance", Check{Name: "n", Prompt: "p", Expect: &Expect{Number: num(1), Tolerance: -1}}, "expect.tolerance:"},
		{"one_of empty", Check{Name: "n", Prompt: "p", Expect: &Expect{OneOf: []string{"a", ""}}}, "expect.one_of[1]:"},
		{"json schema", Check{Name: "n", Prompt: "p", JSON: &JSONCheck{Schema: map[string]any{"type": 12}}}, "json.schema:"},
		{"json none", Check{Name: "n", Prompt: "p", JSON: &JSONCheck{}}, "json.schema:"},
		{"json both", Check{Name: "n", Prompt: "p", JSON: &JSONCheck{Schema: shippedSchema, SchemaFile: "s.json"}}, "json:"},
		{"json send", Check{Name: "n", Prompt: "p", JSON: &JSONCheck{Schema: shippedSchema, Send: "smoke"}}, "json.send:"},
		{"json remote ref", Check{Name: "n", Prompt: "p", JSON: &JSONCheck{Schema: map[string]any{"$ref": "http://127.0.0.1:1/x.json"}}}, "json.schema:"},
		{"json file ref", Check{Name: "n", Prompt: "p", JSON: &JSONCheck{Schema: map[string]any{"$ref": "file:///etc/passwd"}}}, "json.schema:"},
		{"draft-07 schema (meta-schemas are built in)", Check{Name: "n", Prompt: "p", JSON: &JSONCheck{Schema: map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}}}, ""},
		{"ECMA-only pattern", Check{Name: "n", Prompt: "p", JSON: &JSONCheck{Schema: map[string]any{"type": "string", "pattern": `(?<=a)b`}}}, "json.schema:"},
		{"schema_file", Check{Name: "n", Prompt: "p", JSON: &JSONCheck{SchemaFile: "s.json"}}, ""},
		{"schema_file missing", Check{Name: "n", Prompt: "p", JSON: &JSONCheck{SchemaFile: "nope.json"}}, "json.schema_file:"},
		{"schema_file bad", Check{Name: "n", Prompt: "p", JSON: &JSONCheck{SchemaFile: "bad.json"}}, "json.schema_file:"},
		{"no tools", Check{Name: "n", Prompt: "p", Tool: &ToolCheck{Expect: "x"}}, "tool_call.tools:"},
		{"tool name", Check{Name: "n", Prompt: "p", Tool: &ToolCheck{Tools: []Tool{{Name: "a b", Parameters: map[string]any{}}}, Expect: "a b"}}, "tool_call.tools[0].name:"},
		{"tool twice", Check{Name: "n", Prompt: "p", Tool: &ToolCheck{Tools: []Tool{weather, weather}, Expect: "get_weather"}}, "tool_call.tools[1].name:"},
		{"tool params missing", Check{Name: "n", Prompt: "p", Tool: &ToolCheck{Tools: []Tool{{Name: "a"}}, Expect: "a"}}, "tool_call.tools[0].parameters:"},
		{"tool params bad", Check{Name: "n", Prompt: "p", Tool: &ToolCheck{Tools: []Tool{{Name: "a", Parameters: map[string]any{"type": "thing"}}}, Expect: "a"}}, "tool_call.tools[0].parameters:"},
		{"tool expect missing", Check{Name: "n", Prompt: "p", Tool: &ToolCheck{Tools: []Tool{weather}}}, "tool_call.expect:"},
		{"tool expect unknown", Check{Name: "n", Prompt: "p", Tool: &ToolCheck{Tools: []Tool{weather}, Expect: "x"}}, "tool_call.expect:"},
		{"tool choice", Check{Name: "n", Prompt: "p", Tool: &ToolCheck{Tools: []Tool{weather}, Expect: "get_weather", Choice: "any"}}, "tool_call.choice:"},
		{"round trip result", Check{Name: "n", Prompt: "p", Tool: &ToolCheck{Tools: []Tool{weather}, Expect: "get_weather", RoundTrip: &RoundTrip{Expect: *ex}}}, "tool_call.round_trip.result:"},
		{"round trip expect", Check{Name: "n", Prompt: "p", Tool: &ToolCheck{Tools: []Tool{weather}, Expect: "get_weather", RoundTrip: &RoundTrip{Result: "r", Expect: Expect{Regex: "("}}}}, "tool_call.round_trip.expect.regex:"},
		{"stop none", Check{Name: "n", Prompt: "p", Stop: &StopCheck{}}, "stop.sequences:"},
		{"stop empty", Check{Name: "n", Prompt: "p", Stop: &StopCheck{Sequences: []string{""}}}, "stop.sequences[0]:"},
		{"stop many", Check{Name: "n", Prompt: "p", Stop: &StopCheck{Sequences: []string{"a", "b", "c", "d", "e"}}}, "stop.sequences:"},
		{"model empty", Check{Name: "n", Prompt: "p", Model: &Model{}}, "model:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.ValidateIn(dir)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("ValidateIn: %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("ValidateIn: %v, want an error starting %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Errorf("error has several lines: %q", err)
			case err == nil && tc.c.compiled == nil:
				t.Error("valid check kept no compiled forms")
			}
		})
	}
}

func TestSchemaJSONAndHash(t *testing.T) {
	c := valid(t, Check{JSON: &JSONCheck{Schema: shippedSchema}})
	if got := string(c.SchemaJSON()); !strings.Contains(got, `"const":"llmprobe"`) || strings.ContainsAny(got, " \n") {
		t.Errorf("SchemaJSON = %s", got)
	}
	tc := valid(t, Check{Tool: &ToolCheck{Tools: []Tool{weather}, Expect: "get_weather"}})
	if got := string(tc.ToolParameters(0)); !strings.Contains(got, `"enum":["Paris"]`) || tc.ToolParameters(1) != nil {
		t.Errorf("ToolParameters = %s", got)
	}
	a := AnswerSHA256(Answer{Text: "a"})
	if len(a) != 64 || a == AnswerSHA256(Answer{Text: "a", ToolCalls: []ToolCall{{Name: "t"}}}) ||
		AnswerSHA256(Answer{ToolCalls: []ToolCall{{Name: "ab", Arguments: "c"}}}) == AnswerSHA256(Answer{ToolCalls: []ToolCall{{Name: "a", Arguments: "bc"}}}) {
		t.Error("hash does not tell answers apart")
	}
	if a != AnswerSHA256(Answer{Text: "a", FinishReason: "stop", Model: "m"}) {
		t.Error("hash depends on more than text and tool calls")
	}
}

// FuzzJudge: no answer, however hostile, panics the judge or gives a
// verdict outside the closed sets.
func FuzzJudge(f *testing.F) {
	f.Add("42", "get_weather", `{"city":"Paris"}`, "length", 5)
	f.Add("```json\n{\"name\":\"llmprobe\",\"count\":3}\n```", "", "", "stop", 0)
	f.Add(strings.Repeat("[", 10000), "x", strings.Repeat("{\"a\":", 5000), "", -1)
	f.Add("\xff\xfe\x00", "\x00", "\"\\ud800\"", "max_tokens", 1<<30)
	checks := []*Check{}
	for _, c := range []Check{
		{Expect: &Expect{Number: num(42), Tolerance: 0.5}},
		{Expect: &Expect{Regex: `^\d+$`, Whitespace: "collapse", Case: "insensitive"}},
		{Expect: &Expect{OneOf: []string{"a", "b"}}},
		{JSON: &JSONCheck{Schema: shippedSchema}},
		{Tool: &ToolCheck{Tools: []Tool{weather}, Expect: "get_weather"}},
		{Stop: &StopCheck{Sequences: []string{" 6"}}},
		{MaxTokens: 5, Length: &Length{}},
		{Model: &Model{Name: "tiny", SystemFingerprint: "fp"}},
	} {
		c.Name, c.Prompt = "c", "p"
		if err := c.Validate(); err != nil {
			f.Fatal(err)
		}
		checks = append(checks, &c)
	}
	f.Fuzz(func(t *testing.T, text, tool, args, finish string, tokens int) {
		a := Answer{Text: text, ToolCalls: []ToolCall{{Name: tool, Arguments: args}}, FinishReason: finish, Model: tool,
			SystemFingerprint: args, OutputTokens: tokens, OutputTokensKnown: tokens >= 0}
		for _, c := range checks {
			v := c.Judge(a)
			switch {
			case v.Result == Pass && v.Reason == "", v.Result == Fail && v.Reason != "":
			default:
				t.Fatalf("%s: verdict %+v", c.Kind(), v)
			}
		}
		_ = AnswerSHA256(a)
	})
}
