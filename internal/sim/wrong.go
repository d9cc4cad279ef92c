package sim

import (
	"fmt"
	"strings"
)

// wrongKind is a kind of answer the simulator can be told to get wrong
// (Config.WrongAnswers, POST /admin/state {"wrong_answers": [...]}).
type wrongKind uint8

const (
	wrongText     wrongKind = 1 << iota // arithmetic off by one, copy altered, count skips a number
	wrongJSON                           // broken JSON: cut in the middle
	wrongToolCall                       // plain text, no tool call (and a round trip ignores the result)
	wrongStop                           // stop sequences ignored
	wrongLength                         // max_tokens ignored: finish stop, more tokens
	wrongModel                          // another model name (NAME-other) and system_fingerprint
)

// wrongNames are the kinds by name, in their canonical order.
var wrongNames = [...]struct {
	name string
	kind wrongKind
}{
	{"text", wrongText}, {"json", wrongJSON}, {"tool_call", wrongToolCall},
	{"stop", wrongStop}, {"length", wrongLength}, {"model", wrongModel},
}

// WrongAnswerKinds lists the kinds Config.WrongAnswers takes, in order:
// text, json, tool_call, stop, length, model.
func WrongAnswerKinds() []string {
	out := make([]string, len(wrongNames))
	for i, w := range wrongNames {
		out[i] = w.name
	}
	return out
}

// wrongSet is a set of wrong kinds.
type wrongSet uint8

func (s wrongSet) has(k wrongKind) bool { return uint8(s)&uint8(k) != 0 }

// parseWrong reads kind names; an unknown one is an error naming it.
func parseWrong(names []string) (wrongSet, error) {
	var s wrongSet
	for _, n := range names {
		k := kindNamed(n)
		if k == 0 {
			if len(n) > 64 { // named, not echoed at any length
				n = n[:64] + "…"
			}
			return 0, fmt.Errorf("unknown kind %q (known: %s)", n, strings.Join(WrongAnswerKinds(), ", "))
		}
		s |= wrongSet(k)
	}
	return s, nil
}

func kindNamed(n string) wrongKind {
	for _, w := range wrongNames {
		if w.name == n {
			return w.kind
		}
	}
	return 0
}

// names is the set's kinds in canonical order (never nil).
func (s wrongSet) names() []string {
	out := []string{}
	for _, w := range wrongNames {
		if s.has(w.kind) {
			out = append(out, w.name)
		}
	}
	return out
}

// wrongOf is the set configured in c (validated: unknown names are ignored).
func wrongOf(c *Config) wrongSet {
	var s wrongSet
	for _, n := range c.WrongAnswers {
		s |= wrongSet(kindNamed(n))
	}
	return s
}
