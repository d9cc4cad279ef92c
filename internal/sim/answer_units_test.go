package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestInstance: the generator's instance of each schema is the simplest
// valid one (const, enum, default first; required properties only).
func TestInstance(t *testing.T) {
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"shipped", `{"type":"object","properties":{"name":{"type":"string","const":"llmprobe"},"count":{"type":"integer","const":3}},"required":["name","count"],"additionalProperties":false}`, `{"count":3,"name":"llmprobe"}`},
		{"shipped tool", `{"type":"object","properties":{"city":{"type":"string","enum":["Paris"]}},"required":["city"]}`, `{"city":"Paris"}`},
		{"const object", `{"const":{"a":[1,2]}}`, `{"a":[1,2]}`},
		{"enum first", `{"enum":[7,"x"]}`, `7`},
		{"default", `{"type":"string","default":"d"}`, `"d"`},
		{"required only", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"boolean"}},"required":["b"]}`, `{"b":false}`},
		{"nested", `{"type":"object","properties":{"o":{"type":"object","properties":{"n":{"type":"number"},"i":{"type":"integer"}},"required":["n","i"]}},"required":["o"]}`, `{"o":{"i":0,"n":0}}`},
		{"array empty", `{"type":"array","items":{"type":"string"}}`, `[]`},
		{"array minItems", `{"type":"array","items":{"type":"integer","minimum":5},"minItems":2}`, `[5,5]`},
		{"prefixItems", `{"type":"array","prefixItems":[{"type":"boolean"},{"const":"x"}]}`, `[false,"x"]`},
		{"integer bounds", `{"type":"integer","minimum":3,"maximum":9}`, `3`},
		{"integer exclusive", `{"type":"integer","exclusiveMinimum":0}`, `1`},
		{"negative max", `{"type":"integer","maximum":-4}`, `-4`},
		{"multipleOf", `{"type":"integer","minimum":5,"multipleOf":4}`, `8`},
		{"number", `{"type":"number","minimum":0.5}`, `0.5`},
		{"big const", `{"const":12345678901234567890}`, `12345678901234567890`},
		{"boolean", `{"type":"boolean"}`, `false`},
		{"null", `{"type":"null"}`, `null`},
		{"string", `{"type":"string"}`, `""`},
		{"minLength", `{"type":"string","minLength":3}`, `"aaa"`},
		{"format", `{"type":"string","format":"date-time"}`, `"1970-01-01T00:00:00Z"`},
		{"type list", `{"type":["null","integer"]}`, `0`},
		{"no type", `{"properties":{"a":{"const":1}},"required":["a"]}`, `{"a":1}`},
		{"ref", `{"$defs":{"c":{"type":"string","enum":["x"]}},"type":"object","properties":{"p":{"$ref":"#/$defs/c"}},"required":["p"]}`, `{"p":"x"}`},
		{"ref cycle bounded", `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}},"required":["next"]}},"$ref":"#/$defs/n"}`, ""},
		{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"const":1}},"required":["a"]},{"properties":{"b":{"const":2}},"required":["b"]}]}`, `{"a":1,"b":2}`},
		{"anyOf", `{"anyOf":[{"type":"integer"},{"type":"string"}]}`, `0`},
		{"true", `true`, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := decodeSchema([]byte(tc.schema))
			if s == nil {
				t.Fatalf("schema did not decode")
			}
			b, err := json.Marshal(instance(s))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" { // only bounded
				if !strings.Contains(string(b), `{"next":null}`) {
					t.Errorf("cycle: %s", b)
				}
				return
			}
			if string(b) != tc.want {
				t.Errorf("instance %s, want %s", b, tc.want)
			}
		})
	}
}

// TestTokens: how answers are cut into tokens (and so counted in usage).
func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"", []string{""}},
		{"42", []string{"42"}},
		{"1 2 10 100", []string{"1", " 2", " 10", " 100"}},
		{"llmprobe", []string{"llmp", "robe"}},
		{"wörld", []string{"wör", "ld"}}, // ö is 2 bytes: never split
		{"a  b", []string{"a", "  b"}},
		{"😀😀", []string{"😀", "😀"}},
		{`a"b`, []string{`a\"b`}}, // JSON-escaped
	} {
		a := newAnswer(tc.text, "", "")
		var got []string
		for i := range a.tokens() {
			got = append(got, string(a.esc[a.off[i]:a.off[i+1]]))
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: tokens %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestRecognise: which prompts are in the library, and their right text.
func TestRecognise(t *testing.T) {
	for _, tc := range []struct {
		prompt string
		want   string // "-": not a library prompt
	}{
		{"What is 2 + 2? Reply with the number only.", "4"},
		{"  WHAT IS 10 - 12 ?\nReply with the number only  ", "-2"},
		{"What is 99999999999999999999 * 10? Reply with the number only.", "999999999999999999990"},
		{"What is 2 / 2? Reply with the number only.", "-"},
		{"What is the capital of France?", "-"},
		{`Repeat exactly, without quotes: "a b"`, "a b"},
		{`repeat exactly, without quotes: ""`, ""},
		{"Repeat exactly: a", "-"},
		{countPrompt(1), "1"},
		{countPrompt(100), countText(100)},
		{countPrompt(101), "-"},
		{countPrompt(0), "-"},
		{testPrompt, "-"},
		{"", "-"},
	} {
		r, ok := textReply(trimSpace([]byte(tc.prompt)))
		got := r.text
		if !ok {
			got = "-"
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.prompt, got, tc.want)
		}
	}
}

// TestChooseTool: tool_choice in each API's shape picks the call.
func TestChooseTool(t *testing.T) {
	tools := `[{"type":"function","function":{"name":"a","parameters":{"type":"object"}}},{"type":"function","function":{"name":"b","parameters":{"type":"object","properties":{"x":{"const":1}},"required":["x"]}}}]`
	anth := `[{"name":"a","input_schema":{"type":"object"}},{"name":"b","input_schema":{"type":"object","properties":{"x":{"const":1}},"required":["x"]}}]`
	for _, tc := range []struct {
		tools, choice string
		want          string // name args, or "-"
	}{
		{tools, ``, `a {}`},
		{tools, `"required"`, `a {}`},
		{tools, `"none"`, `-`},
		{tools, `{"type":"function","function":{"name":"b"}}`, `b {"x":1}`},
		{tools, `{"type":"function","name":"b"}`, `b {"x":1}`},
		{anth, `{"type":"tool","name":"b"}`, `b {"x":1}`},
		{anth, `{"type":"any"}`, `a {}`},
		{anth, `{"type":"none"}`, `-`},
		{`[{"type":"web_search"}]`, ``, `-`},
		{`[]`, ``, `-`},
	} {
		tc1, ok := chooseTool(json.RawMessage(tc.tools), json.RawMessage(tc.choice))
		got := "-"
		if ok {
			got = tc1.name + " " + tc1.args
		}
		if got != tc.want {
			t.Errorf("%s with %s: %s, want %s", tc.tools, tc.choice, got, tc.want)
		}
	}
}

// TestWrongAnswersState: GET /admin/state shows wrong_answers, POST sets
// them (canonical order, no repeats), an unknown kind is 400 naming it and
// changes nothing.
func TestWrongAnswersState(t *testing.T) {
	s, base := startServer(t, testConfig())
	c := testClient(t)
	url := strings.TrimSuffix(base, "/v1") + "/admin/state"
	do := func(body string) (int, string) {
		t.Helper()
		var resp *http.Response
		var err error
		if body == "" {
			resp, err = c.Get(url)
		} else {
			resp, err = c.Post(url, "application/json", strings.NewReader(body))
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	wrong := func(body string) []string {
		var st State
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return st.WrongAnswers
	}
	if code, body := do(""); code != 200 || !strings.Contains(body, `"wrong_answers":[]`) {
		t.Fatalf("GET: %d %s", code, body)
	}
	if code, body := do(`{"wrong_answers":["model","text","model"]}`); code != 200 || !reflect.DeepEqual(wrong(body), []string{"text", "model"}) {
		t.Fatalf("POST: %d %s", code, body)
	}
	code, body := do(`{"wrong_answers":["json","bogus"]}`)
	if code != http.StatusBadRequest || !strings.Contains(body, `"bogus"`) || !strings.Contains(body, "wrong_answers") {
		t.Fatalf("unknown kind: %d %s", code, body)
	}
	if got := s.State().WrongAnswers; !reflect.DeepEqual(got, []string{"text", "model"}) {
		t.Fatalf("a refused update changed the state: %v", got)
	}
	if code, body := do(`{"slots":3}`); code != 200 || !reflect.DeepEqual(wrong(body), []string{"text", "model"}) {
		t.Fatalf("another field's update: %d %s", code, body)
	}
	if code, body := do(`{"wrong_answers":[]}`); code != 200 || len(wrong(body)) != 0 {
		t.Fatalf("all right again: %d %s", code, body)
	}
	cfg := testConfig()
	cfg.WrongAnswers = []string{"length", "nope"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `wrong_answers: unknown kind "nope"`) {
		t.Errorf("Validate: %v", err)
	}
	if got := WrongAnswerKinds(); fmt.Sprint(got) != "[text json tool_call stop length model]" {
		t.Errorf("kinds %v", got)
	}
}

// TestOtherPromptsKeepTheFiller: a prompt outside the library gets the
// filler whatever is set wrong (but the model, which renames every
// response), with no system_fingerprint; so do look-alikes and tools
// refused by tool_choice none.
func TestOtherPromptsKeepTheFiller(t *testing.T) {
	cfg := testConfig()
	cfg.WrongAnswers = WrongAnswerKinds()
	_, wrongBase := startServer(t, cfg)
	_, rightBase := startServer(t, testConfig())
	c := testClient(t)
	filler := string(appendTokens(nil, 0, 5))
	chatNone := `{"model":"m","stream":true,"messages":[{"role":"user","content":"What is 1 + 1? Reply with the number only."}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"none"}`
	for _, ac := range apiCases {
		for _, base := range []string{rightBase, wrongBase} {
			for _, stream := range []bool{true, false} {
				bodies := []string{ac.body("m", 0, stream), strings.Replace(ac.body("m", 0, stream), testPrompt, "What is the capital of France?", 1)}
				for _, body := range bodies {
					h := askSim(t, c, base, ac, body, stream)
					wantModel := map[bool]string{true: "m-other", false: "m"}[base == wrongBase]
					if h.text != filler || h.tool != "" || h.completion != 5 || h.finish != "stop" || h.fingerprint != "" || h.model != wantModel {
						t.Errorf("%s %s stream=%t: %+v, want the filler %q from %s", ac.name, base, stream, h, filler, wantModel)
					}
				}
			}
		}
	}
	// tool_choice none: the arithmetic prompt is answered as text.
	h := askSim(t, c, rightBase, apiCases[0], chatNone, true)
	if h.text != "2" || h.tool != "" {
		t.Errorf("tool_choice none: %+v", h)
	}
}

// TestOddShapesStillServed: a role or part type of any JSON type is read
// as before the library (not refused), and decodes as a turn of the right
// kind.
func TestOddShapesStillServed(t *testing.T) {
	for _, tc := range []struct {
		a    api
		body string
		last string
		tool bool
	}{
		{apiChat, `{"model":"m","messages":[{"role":5,"type":7,"content":[{"type":3,"text":"hi"}]}]}`, "", false}, // not a user turn
		{apiChat, `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`, "q", false},
		{apiChat, `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"tool","content":"r"}]}`, "q", true},
		{apiResponses, `{"model":"m","input":"just text"}`, "just text", false},
		{apiResponses, `{"model":"m","input":[{"role":"user","content":"q"},{"type":"function_call_output","call_id":"c","output":"r"}]}`, "q", true},
		{apiMessages, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r"}]}]}]}`, "r", true},
	} {
		r, err := decodeRequest(tc.a, []byte(tc.body))
		if err != nil {
			t.Errorf("%s: %v", tc.body, err)
			continue
		}
		if string(r.Ask.last) != tc.last || r.Ask.toolResult != tc.tool || tc.tool && string(r.Ask.result) != "r" {
			t.Errorf("%s: last %q tool %t result %q", tc.body, r.Ask.last, r.Ask.toolResult, r.Ask.result)
		}
	}
}

// TestCompletionsLastParagraph: a completions prompt joined from several
// messages is answered from its last paragraph.
func TestCompletionsLastParagraph(t *testing.T) {
	for _, tc := range []struct {
		a      api
		prompt string
		want   string
	}{
		{apiCompletions, "You are terse.\n\nWhat is 6 * 7? Reply with the number only.", "42"},
		{apiCompletions, "What is 6 * 7? Reply with the number only.", "42"},
		{apiChat, "You are terse.\n\nWhat is 6 * 7? Reply with the number only.", "-"},
	} {
		r, ok := recognise(tc.a, &ask{last: []byte(tc.prompt)})
		got := r.text
		if !ok {
			got = "-"
		}
		if got != tc.want {
			t.Errorf("%d %q: %q, want %q", tc.a, tc.prompt, got, tc.want)
		}
	}
}
