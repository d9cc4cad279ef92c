package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/answercheck"
)

// canaryYAML is a target with one canary class holding a check of every
// kind, in the shapes docs/checks.md shows.
const canaryYAML = `
targets:
  - name: t1
    url: http://127.0.0.1:8000/v1
    model: m
    classes:
      - name: chat
      - name: canary
        record_answers: excerpt
        checks:
          - name: add
            prompt: "What is 2 + 3? Reply with the number only."
            max_tokens: 8
            seed: 7
            expect: {number: 5, tolerance: 0.5, whitespace: collapse}
          - name: json
            prompt: Reply with a JSON object.
            json:
              send: response_format
              schema:
                type: object
                properties:
                  name: {type: string, const: llmprobe}
                  count: {type: integer, const: 3}
                  "a.b": {type: boolean}
                required: [name, count]
                additionalProperties: false
          - name: tool
            messages:
              - {role: system, content: "You call tools."}
              - {role: user, content: "What is the weather in Paris?"}
            tool_call:
              expect: get_weather
              choice: named
              tools:
                - name: get_weather
                  parameters:
                    type: object
                    properties: {city: {type: string, enum: [Paris]}}
                    required: [city]
              round_trip: {result: 18 degrees, expect: {regex: "18"}}
          - name: stop
            prompt: Count from 1 to 10.
            stop: {sequences: [" 6"]}
          - name: length
            prompt: Count from 1 to 50.
            max_tokens: 5
            length: {}
          - name: model
            prompt: Hi
            model: {name: m, system_fingerprint: fp_1}
`

func TestChecksDecode(t *testing.T) {
	c, err := LoadWith(Options{Path: write(t, canaryYAML), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	cls := c.Targets[0].Classes
	if cls[0].IsCanary() || cls[0].RecordAnswers != RecordAnswersNone {
		t.Errorf("plain class: canary %v, record_answers %q; want false, none", cls[0].IsCanary(), cls[0].RecordAnswers)
	}
	cl := cls[1]
	if !cl.IsCanary() || cl.RecordAnswers != RecordAnswersExcerpt || len(cl.Checks) != 6 {
		t.Fatalf("canary class: %d checks, record_answers %q", len(cl.Checks), cl.RecordAnswers)
	}
	var kinds []answercheck.Kind
	for _, ch := range cl.Checks {
		kinds = append(kinds, ch.Kind())
	}
	if want := answercheck.Kinds(); !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	add := cl.Checks[0]
	if add.MaxTokens != 8 || add.Seed != 7 || add.Expect.Number == nil || *add.Expect.Number != 5 || add.Expect.Tolerance != 0.5 || add.Expect.Whitespace != "collapse" {
		t.Errorf("expect check decoded as %+v / %+v", add, add.Expect)
	}
	schema := cl.Checks[1].JSON.Schema
	props, ok := schema["properties"].(map[string]any)
	if !ok {
		t.Fatalf("schema.properties is %T, want a map[string]any", schema["properties"])
	}
	name, _ := props["name"].(map[string]any)
	if name["const"] != "llmprobe" || schema["additionalProperties"] != false {
		t.Errorf("schema decoded as %#v", schema)
	}
	if _, ok := props["a.b"]; !ok {
		t.Errorf("a property name with a dot was split: %#v", props)
	}
	count, _ := props["count"].(map[string]any)
	if c, ok := count["const"].(float64); !ok || c != 3 {
		t.Errorf("schema's const 3 decoded as %T %v, want float64 3 (as encoding/json decodes JSON)", count["const"], count["const"])
	}
	if req, _ := schema["required"].([]any); len(req) != 2 || req[0] != "name" {
		t.Errorf("schema.required decoded as %#v", schema["required"])
	}
	tool := cl.Checks[2]
	if len(tool.Messages) != 2 || tool.Messages[1].Role != "user" || tool.Tool.Expect != "get_weather" || tool.Tool.Choice != "named" ||
		tool.Tool.RoundTrip == nil || tool.Tool.RoundTrip.Expect.Regex != "18" || tool.Tool.Tools[0].Parameters["type"] != "object" {
		t.Errorf("tool_call check decoded as %+v / %+v", tool, tool.Tool)
	}
	if s := cl.Checks[3].Stop; s == nil || len(s.Sequences) != 1 || s.Sequences[0] != " 6" {
		t.Errorf("stop check decoded as %+v", s)
	}
	if m := cl.Checks[5].Model; m.Name != "m" || m.SystemFingerprint != "fp_1" {
		t.Errorf("model check decoded as %+v", m)
	}
}

func TestChecksRefused(t *testing.T) {
	canary := func(class string) string {
		return minimal[:len(minimal)-1] + "\n    classes:\n" + class
	}
	many := "      - name: c\n        checks:\n"
	for i := range MaxChecksPerClass + 1 {
		many += fmt.Sprintf("          - {name: c%d, prompt: p, length: {}}\n", i)
	}
	cases := []struct {
		name, class, key, msg string
	}{
		{"bad name", "      - name: c\n        checks: [{name: Add!, prompt: p, length: {}}]\n", "classes[0].checks[0].name", "metric label"},
		{"duplicate name", "      - name: c\n        checks: [{name: a, prompt: p, length: {}}, {name: a, prompt: q, length: {}}]\n",
			"classes[0].checks[1].name", `duplicate check name "a"`},
		{"no kind", "      - name: c\n        checks: [{name: a, prompt: p}]\n", "classes[0].checks[0]", "exactly one of"},
		{"two kinds", "      - name: c\n        checks: [{name: a, prompt: p, length: {}, stop: {sequences: [x]}}]\n", "classes[0].checks[0]", "(got 2)"},
		{"no prompt", "      - name: c\n        checks: [{name: a, length: {}}]\n", "classes[0].checks[0].prompt", "prompt or messages"},
		{"prompt and messages", "      - name: c\n        checks: [{name: a, prompt: p, messages: [{role: user, content: q}], length: {}}]\n",
			"classes[0].checks[0].prompt", "prompt or messages"},
		{"negative max_tokens", "      - name: c\n        checks: [{name: a, prompt: p, max_tokens: -1, length: {}}]\n", "classes[0].checks[0].max_tokens", "want 0"},
		{"unknown key in a kind", "      - name: c\n        checks: [{name: a, prompt: p, expect: {txt: x}}]\n", "classes[0].checks[0].expect.txt", "unknown key"},
		{"number not a number", "      - name: c\n        checks: [{name: a, prompt: p, expect: {number: five}}]\n", "classes[0].checks[0].expect.number", "want a number"},
		{"too many", many, "classes[0].checks", "at most 32"},
		{"prompt file", "      - name: c\n        prompt: {source: file, file: x.txt}\n        checks: [{name: a, prompt: p, length: {}}]\n", "classes[0].prompt.source", "canary class"},
		{"prefix", "      - name: c\n        prefix: {tokens: 64}\n        checks: [{name: a, prompt: p, length: {}}]\n", "classes[0].prefix.tokens", "canary class"},
		{"session", "      - name: c\n        session: {turns: 2}\n        checks: [{name: a, prompt: p, length: {}}]\n", "classes[0].session.turns", "canary class"},
		{"cache bust", "      - name: c\n        cache_bust_fraction: 0.5\n        checks: [{name: a, prompt: p, length: {}}]\n", "classes[0].cache_bust_fraction", "canary class"},
		{"record_answers value", "      - name: c\n        record_answers: all\n        checks: [{name: a, prompt: p, length: {}}]\n", "classes[0].record_answers", "want none or excerpt"},
		{"excerpt without checks", "      - name: c\n        record_answers: excerpt\n", "classes[0].record_answers", "has no checks"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, canary(tc.class))
			_, err := LoadWith(Options{Path: path, Environ: noEnv})
			if err == nil {
				t.Fatal("loaded; want an error")
			}
			want := path + ":"
			key := "targets[0]." + tc.key + ": "
			for _, line := range strings.Split(err.Error(), "\n") {
				if strings.HasPrefix(line, want) && strings.Contains(line, key) && strings.Contains(line, tc.msg) {
					return
				}
			}
			t.Errorf("error %q\nhas no line %s…%s…%s", err, want, key, tc.msg)
		})
	}
}

func TestCanaryGateWarnings(t *testing.T) {
	body := minimal[:len(minimal)-1] + `
    classes:
      - name: plain
        gates: {ttft: 1s}
      - name: canary
        checks: [{name: a, prompt: p, length: {}}]
      - name: gated-canary
        gates: {ttft: 1s}
        checks: [{name: a, prompt: p, length: {}}]
`
	c, err := LoadWith(Options{Path: write(t, body), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	ws := c.Warnings()
	if len(ws) != 1 || ws[0].Key != "targets[0].classes[2].gates" || !strings.Contains(ws[0].Msg, "canary class gated-canary") {
		t.Errorf("warnings %v; want one, on the gated canary class only", ws)
	}
}

// TestRedactedChecks: /config shows a canary class's checks without their
// prompt material, and the configuration itself keeps it.
func TestRedactedChecks(t *testing.T) {
	c, err := LoadWith(Options{Path: write(t, canaryYAML), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	r := c.Redacted()
	got := r.Targets[0].Classes[1].Checks
	if got[0].Prompt == c.Targets[0].Classes[1].Checks[0].Prompt || got[2].Messages[1].Content == "What is the weather in Paris?" {
		t.Errorf("a check's prompt reached /config: %+v", got[:3])
	}
	if got[0].Expect == nil || got[0].Name != "add" || c.Targets[0].Classes[1].Checks[0].Prompt == "" {
		t.Errorf("redaction lost the check or touched the configuration: %+v", got[0])
	}
}
