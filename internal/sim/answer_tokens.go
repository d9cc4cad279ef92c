package sim

import (
	"encoding/json"
	"unicode/utf8"
)

// tokenBytes is the most bytes an answer token holds (a token is about four
// characters, as prompt tokens are counted).
const tokenBytes = 4

// newAnswer cuts text into tokens: whitespace after a non-whitespace byte
// starts a new token (a word with its leading space, like the filler's
// tokens), and a token holds at most tokenBytes bytes, never splitting a
// character. An empty text is one empty token. name (non-empty) makes it a
// tool call whose arguments are text.
func newAnswer(text, name, stopSeq string) *answer {
	a := &answer{raw: text, stopSeq: stopSeq, off: []int{0}}
	if name != "" {
		a.tool = true
		a.name, _ = json.Marshal(name)
	}
	start := 0
	for i := 0; i < len(text); {
		_, n := utf8.DecodeRuneInString(text[i:])
		wordStart := i > start && isSpace(text[i]) && !isSpace(text[i-1])
		if wordStart || i+n-start > tokenBytes && i > start {
			a.add(text[start:i])
			start = i
		}
		i += n
	}
	if start < len(text) || len(text) == 0 {
		a.add(text[start:])
	}
	return a
}

// add appends one token, JSON-escaped (without quotes).
func (a *answer) add(tok string) {
	q, _ := json.Marshal(tok)
	a.esc = append(a.esc, q[1:len(q)-1]...)
	a.off = append(a.off, len(a.esc))
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// appendContent appends content tokens [from, from+n): the answer's when
// the request is a library prompt, else the filler's (after the reasoning
// tokens).
func (g *gen) appendContent(b []byte, from, n int) []byte {
	if g.ans == nil {
		return appendTokens(b, g.reasoning+from, n)
	}
	return append(b, g.ans.esc[g.ans.off[from]:g.ans.off[from+n]]...)
}
