package answercheck

// The judging rules (docs/checks.md repeats them for users):
//   - expect: the whitespace rule first (trim by default; collapse; exact),
//     then the case rule (sensitive by default); text and one_of compare
//     whole texts; a regex (RE2) is unanchored; a number is the whole
//     answer as a decimal (one trailing full stop allowed; no thousands
//     separators, hex, NaN or Inf), within ± tolerance.
//   - json: one Markdown fence around the whole answer (``` or ```json)
//     is removed; then exactly one JSON value must parse (invalid_json) and
//     validate against the schema (schema).
//   - tool_call: the first call of the expected tool is judged; no call is
//     no_tool_call, only other tools wrong_tool, arguments that do not
//     parse or validate bad_arguments (empty arguments are {}). With a
//     round trip the final text is judged by its expect (mismatch).
//   - stop: the text contains a sequence: stop_ignored.
//   - length: the finish reason must be length, max_tokens or
//     max_output_tokens and, when the server reported usage, its output
//     tokens must equal max_tokens; without usage the finish reason alone
//     decides.
//   - model: the model (and the system fingerprint when one is expected;
//     a missing one fails) must be the expected ones: wrong_model.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Kind is the check's kind (which of its fields is set).
func (c *Check) Kind() Kind {
	switch {
	case c.Expect != nil:
		return KindExpect
	case c.JSON != nil:
		return KindJSON
	case c.Tool != nil:
		return KindToolCall
	case c.Stop != nil:
		return KindStop
	case c.Length != nil:
		return KindLength
	case c.Model != nil:
		return KindModel
	}
	return ""
}

// Judge judges an answer to the check. The caller judges only answers to
// requests that ended ok (anything else is NotJudged, counted by
// availability). A check that does not validate judges nothing
// (NotJudged): configuration validation refuses it first. Judge is safe for
// concurrent use and compiles nothing after Validate.
func (c *Check) Judge(a Answer) Verdict {
	cc, err := c.ready()
	if err != nil {
		return Verdict{Result: NotJudged}
	}
	fail := func(r Reason) Verdict { return Verdict{Result: Fail, Reason: r} }
	switch c.Kind() {
	case KindExpect:
		if !c.Expect.match(cc.regex, a.Text) {
			return fail(Mismatch)
		}
	case KindJSON:
		if r := validJSON(cc.schema, StripFence(a.Text)); r != "" {
			return fail(r)
		}
	case KindToolCall:
		if c.Tool.RoundTrip != nil {
			// The exchange already holds the call and its result: the
			// final answer is text.
			if !c.Tool.RoundTrip.Expect.match(cc.regex, a.Text) {
				return fail(Mismatch)
			}
			break
		}
		if r := c.Tool.judge(cc, a.ToolCalls); r != "" {
			return fail(r)
		}
	case KindStop:
		for _, s := range c.Stop.Sequences {
			if strings.Contains(a.Text, s) {
				return fail(StopIgnored)
			}
		}
	case KindLength:
		if !LengthFinish(a.FinishReason) || (a.OutputTokensKnown && a.OutputTokens != c.EffectiveMaxTokens()) {
			return fail(LengthIgnored)
		}
	case KindModel:
		m := c.Model
		if (m.Name != "" && a.Model != m.Name) || (m.SystemFingerprint != "" && a.SystemFingerprint != m.SystemFingerprint) {
			return fail(WrongModel)
		}
	default:
		return Verdict{Result: NotJudged}
	}
	return Verdict{Result: Pass}
}

// LengthFinish reports whether a finish reason says the answer was cut at
// max_tokens: "length" (OpenAI chat and completions), "max_tokens"
// (Anthropic), "max_output_tokens" (Responses' incomplete reason).
func LengthFinish(r string) bool {
	return r == "length" || r == "max_tokens" || r == "max_output_tokens"
}

// match applies the expect's rules to text: whitespace first (trim by
// default), then case, then the comparison. A regex is unanchored (RE2
// syntax; anchor it with ^ and $) and sees the text after the whitespace
// rule.
func (e *Expect) match(re *regexp.Regexp, text string) bool {
	text = e.space(text)
	switch {
	case e.Regex != "":
		return re != nil && re.MatchString(text)
	case e.Number != nil:
		v, ok := parseNumber(text)
		return ok && math.Abs(v-*e.Number) <= e.Tolerance
	case len(e.OneOf) > 0:
		for _, s := range e.OneOf {
			if e.equal(text, e.space(s)) {
				return true
			}
		}
		return false
	}
	return e.equal(text, e.space(e.Text))
}

func (e *Expect) equal(a, b string) bool {
	if e.Case == "insensitive" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// space applies the whitespace rule.
func (e *Expect) space(s string) string {
	switch e.Whitespace {
	case "exact":
		return s
	case "collapse":
		return strings.Join(strings.Fields(s), " ")
	}
	return strings.TrimSpace(s)
}

// parseNumber reads an answer that is a number alone: a decimal (sign,
// fraction and exponent allowed, thousands separators not), optionally
// followed by one full stop ("42." as a sentence). Anything else is not a
// number.
func parseNumber(s string) (float64, bool) {
	s = strings.TrimSuffix(s, ".")
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '_' || r == ',' }) {
		return 0, false
	}
	if l := strings.ToLower(s); strings.Contains(l, "inf") || strings.Contains(l, "nan") || strings.HasPrefix(strings.TrimLeft(l, "+-"), "0x") {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsInf(v, 0)
}

// StripFence removes one Markdown code fence wrapping the whole answer
// (```json … ``` or ``` … ```), as chat models often wrap JSON asked for in
// the prompt; the JSON inside is judged. An answer that is not wholly
// fenced is returned as it is.
func StripFence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return s
	}
	body := t[3 : len(t)-3]
	nl := strings.IndexByte(body, '\n')
	if nl < 0 {
		return s
	}
	if info := strings.TrimSpace(body[:nl]); info != "" && !strings.EqualFold(info, "json") {
		return s
	}
	return body[nl+1:]
}

// validJSON returns "" when text is one JSON value valid against sch,
// InvalidJSON when it does not parse, Schema when it does not validate.
func validJSON(sch *jsonschema.Schema, text string) Reason {
	v, ok := parseJSON(text)
	if !ok {
		return InvalidJSON
	}
	if sch != nil && sch.Validate(v) != nil {
		return Schema
	}
	return ""
}

// parseJSON parses exactly one JSON value (white space around it allowed)
// with the schema library's reader (numbers kept exact).
func parseJSON(text string) (any, bool) {
	if strings.TrimSpace(text) == "" {
		return nil, false
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(text)))
	return v, err == nil
}

// judge finds the expected tool among the calls: none is NoToolCall, only
// other tools is WrongTool, arguments that are not JSON or not valid
// against the tool's parameters are BadArguments (empty arguments are {}).
func (t *ToolCheck) judge(cc *compiled, calls []ToolCall) Reason {
	if len(calls) == 0 {
		return NoToolCall
	}
	idx := -1
	for i, tl := range t.Tools {
		if tl.Name == t.Expect {
			idx = i
		}
	}
	for _, call := range calls {
		if call.Name != t.Expect {
			continue
		}
		args := call.Arguments
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		v, ok := parseJSON(args)
		if !ok {
			return BadArguments
		}
		if idx >= 0 && idx < len(cc.tools) && cc.tools[idx].schema.Validate(v) != nil {
			return BadArguments
		}
		return ""
	}
	return WrongTool
}

// AnswerSHA256 is the hex SHA-256 of the answer: its text, then each tool
// call as NUL, name, NUL, arguments. Equal answers hash equal whatever the
// API; the hash tells answers apart without keeping them.
func AnswerSHA256(a Answer) string {
	h := sha256.New()
	h.Write([]byte(a.Text))
	for _, c := range a.ToolCalls {
		h.Write([]byte{0})
		h.Write([]byte(c.Name))
		h.Write([]byte{0})
		h.Write([]byte(c.Arguments))
	}
	return hex.EncodeToString(h.Sum(nil))
}
