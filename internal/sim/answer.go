package sim

import (
	"bytes"
	"encoding/json"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The prompt library (docs/simulator.md, "Answers"): the simulator answers
// these prompts right, and wrong on demand (wrong.go); any other prompt gets
// the filler text. Matching is on the last user message, case-insensitive.
var (
	arithmeticRe = regexp.MustCompile(`(?i)^what\s+is\s+(-?\d+)\s*([-+*])\s*(-?\d+)\s*\?\s*reply\s+with\s+the\s+number\s+only\.?$`)
	copyRe       = regexp.MustCompile(`(?is)^repeat\s+exactly,\s*without\s+quotes:\s*"(.*)"$`)
	countRe      = regexp.MustCompile(`(?i)^count\s+from\s+1\s+to\s+(\d+),\s*separated\s+by\s+single\s+spaces\.\s*reply\s+with\s+the\s+numbers\s+only\.?$`)
)

// schemaMarker introduces a JSON Schema in a prompt.
const schemaMarker = "matching this json schema:"

// maxCount is the largest N the count prompt answers.
const maxCount = 100

// Fingerprints the chat API reports with a library answer.
const (
	simFingerprint   = "fp_llmprobe_sim"
	otherFingerprint = "fp_llmprobe_sim_other"
)

// answer is a library answer, cut into tokens (answer_tokens.go).
type answer struct {
	tool    bool   // a tool call: the tokens are its arguments
	name    []byte // the tool's name, JSON-quoted
	raw     string // the whole text (tool: the arguments JSON), before any cap
	esc     []byte // JSON-escaped text of every token, in order
	off     []int  // token i is esc[off[i]:off[i+1]]
	stopSeq string // the stop sequence that cut the text ("": none)
}

// tokens is how many tokens the answer has.
func (a *answer) tokens() int { return len(a.off) - 1 }

// reply is what the library makes of a request before wrong answers, stop
// sequences and tokens: a text, JSON, or a tool call.
type reply struct {
	text  string
	kind  wrongKind // which wrong kind breaks it (0: none applies)
	alter func(string) string
	tool  *toolCall
}

type toolCall struct {
	name string
	args string
}

// plan sets what g will emit: a library answer (no reasoning; a chat one
// with its system_fingerprint) or the filler drawn, cut at the request's
// cap; a wrong model renames every response.
func plan(g *gen, a api, req *request, lc *Config) {
	wrong := wrongOf(lc)
	if wrong.has(wrongModel) {
		g.model, _ = json.Marshal(req.Model + "-other")
	}
	limit := req.MaxTokens
	if ans := libraryAnswer(a, req, wrong); ans != nil {
		g.ans, g.reasoning, g.content = ans, 0, ans.tokens()
		if a == apiChat {
			g.fingerprint = simFingerprint
			if wrong.has(wrongModel) {
				g.fingerprint = otherFingerprint
			}
		}
		if wrong.has(wrongLength) {
			limit = 0
		}
	}
	if limit > 0 && g.reasoning+g.content > limit {
		g.finishLength = true
		g.reasoning = min(g.reasoning, limit)
		g.content = limit - g.reasoning
	}
}

// libraryAnswer answers a library prompt (nil for any other), right unless
// wrong says otherwise.
func libraryAnswer(a api, req *request, wrong wrongSet) *answer {
	r, ok := recognise(a, &req.Ask)
	if !ok {
		return nil
	}
	if r.tool != nil {
		if !wrong.has(wrongToolCall) {
			return newAnswer(r.tool.args, r.tool.name, "")
		}
		r = reply{text: "I will answer without calling a tool."}
	}
	text := r.text
	if r.kind != 0 && wrong.has(r.kind) {
		text = r.alter(text)
	}
	seq := ""
	if !wrong.has(wrongStop) {
		text, seq = cutAtStop(text, stopSequences(req.Ask.stop))
	}
	return newAnswer(text, "", seq)
}

// recognise finds which library prompt the request is, in order: a tool
// result's round trip, a tool call, JSON asked by the request or the
// prompt, then arithmetic, copy and count.
func recognise(a api, k *ask) (reply, bool) {
	if k.toolResult {
		return reply{text: "The tool said: " + string(k.result), kind: wrongToolCall,
			alter: func(string) string { return "The tool said nothing." }}, true
	}
	if a != apiCompletions && len(k.tools) > 0 {
		if tc, ok := chooseTool(k.tools, k.toolChoice); ok {
			return reply{tool: &tc}, true
		}
	}
	if schema, asked := requestSchema(k.format, k.schema); schema != nil {
		return jsonReply(schema), true
	} else if s := promptSchema(k.last); s != nil {
		return jsonReply(s), true
	} else if asked {
		return jsonReply(map[string]any{}), true
	}
	if r, ok := textReply(trimSpace(k.last)); ok || a != apiCompletions {
		return r, ok
	}
	// A completions prompt made of several messages (llmprobe joins them
	// with blank lines): its last paragraph is the user's.
	if i := bytes.LastIndex(k.last, []byte("\n\n")); i >= 0 {
		return textReply(trimSpace(k.last[i+2:]))
	}
	return reply{}, false
}

func jsonReply(schema any) reply {
	b, err := json.Marshal(instance(schema))
	if err != nil {
		b = []byte("null")
	}
	return reply{text: string(b), kind: wrongJSON, alter: cutInHalf}
}

func trimSpace(b []byte) []byte { return bytes.TrimSpace(b) }

// hasPrefixFold reports whether b starts with prefix (ASCII, lower case),
// ignoring case.
func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && strings.EqualFold(string(b[:len(prefix)]), prefix)
}

// textReply answers arithmetic, copy and count. The cheap prefix tests keep
// the regular expressions off other prompts.
func textReply(p []byte) (reply, bool) {
	switch {
	case hasPrefixFold(p, "what"):
		m := arithmeticRe.FindSubmatch(p)
		if m == nil {
			return reply{}, false
		}
		x, okx := new(big.Int).SetString(string(m[1]), 10)
		y, oky := new(big.Int).SetString(string(m[3]), 10)
		if !okx || !oky {
			return reply{}, false
		}
		switch m[2][0] {
		case '+':
			x.Add(x, y)
		case '-':
			x.Sub(x, y)
		default:
			x.Mul(x, y)
		}
		return reply{text: x.String(), kind: wrongText, alter: offByOne}, true
	case hasPrefixFold(p, "repeat"):
		m := copyRe.FindSubmatch(p)
		if m == nil {
			return reply{}, false
		}
		return reply{text: string(m[1]), kind: wrongText, alter: alterCopy}, true
	case hasPrefixFold(p, "count"):
		m := countRe.FindSubmatch(p)
		if m == nil {
			return reply{}, false
		}
		n, err := strconv.Atoi(string(m[1]))
		if err != nil || n < 1 || n > maxCount {
			return reply{}, false
		}
		return reply{text: countTo(n, 0), kind: wrongText, alter: func(string) string { return countTo(n, 2) }}, true
	}
	return reply{}, false
}

// countTo is "1 2 … n" without skip (0: none; n = 1 with skip: "0").
func countTo(n, skip int) string {
	if n == 1 && skip != 0 {
		return "0"
	}
	var b []byte
	for i := 1; i <= n; i++ {
		if i == skip {
			continue
		}
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(i), 10)
	}
	return string(b)
}

// offByOne adds one to an integer text.
func offByOne(s string) string {
	x, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return s + "1"
	}
	return x.Add(x, big.NewInt(1)).String()
}

// alterCopy drops the last character (a one-character text becomes "?",
// "?" becomes "!").
func alterCopy(s string) string {
	_, n := utf8.DecodeLastRuneInString(s)
	if len(s) > n {
		return s[:len(s)-n]
	}
	if s == "?" {
		return "!"
	}
	return "?"
}

// cutInHalf is broken JSON: the text cut in the middle (at a character).
func cutInHalf(s string) string {
	i := len(s) / 2
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if i == 0 {
		return "{"
	}
	return s[:i]
}

// stopSequences reads OpenAI's stop (a string or an array) or Anthropic's
// stop_sequences.
func stopSequences(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}

// cutAtStop cuts text before the earliest stop sequence; it returns the
// sequence that cut it.
func cutAtStop(text string, seqs []string) (string, string) {
	at, which := -1, ""
	for _, s := range seqs {
		if s == "" {
			continue
		}
		if i := strings.Index(text, s); i >= 0 && (at < 0 || i < at) {
			at, which = i, s
		}
	}
	if at < 0 {
		return text, ""
	}
	return text[:at], which
}
