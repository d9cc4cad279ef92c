package workload

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/protocol"
)

// checkAt is the check class c sends at its request n (from 1): its
// checks in rotation, so that every check runs once in each len(Checks)
// consecutive requests of the class (a class's mix numbers its own
// requests).
func (c *Class) checkAt(n uint64) *answercheck.Check {
	return &c.Checks[(n-1)%uint64(len(c.Checks))]
}

// CheckParams is the request of check c: the check itself (the protocol
// client sends it in its deterministic shape and judges the answer), its
// prompt or messages as the request's messages, and its max_tokens
// (answercheck.DefaultMaxTokens when unset). excerpt keeps a sanitised
// excerpt of the answer on the record (record_answers: excerpt). The
// caller sets the model. c is shared by every request of its check and is
// never written.
func CheckParams(c *answercheck.Check, excerpt bool) protocol.Params {
	p := protocol.Params{Check: c, MaxTokens: c.MaxTokens, RecordExcerpt: excerpt}
	if p.MaxTokens <= 0 {
		p.MaxTokens = answercheck.DefaultMaxTokens
	}
	if c.Prompt != "" {
		p.Messages = []protocol.Message{{Role: "user", Content: c.Prompt}}
	} else {
		p.Messages = make([]protocol.Message, len(c.Messages))
		for i, m := range c.Messages {
			p.Messages[i] = protocol.Message{Role: m.Role, Content: m.Content}
		}
	}
	return p
}

// checkChars is what a check's request carries beyond its messages, in
// characters: the JSON Schema it sends, the tools it offers, and a round
// trip's tool call and result. UsageBound counts it as prompt.
func checkChars(c *answercheck.Check) int {
	n := 0
	size := func(v any) int {
		b, err := json.Marshal(v)
		if err != nil {
			return 0
		}
		return utf8.RuneCount(b)
	}
	if c.JSON != nil {
		n += size(c.JSON.Schema)
	}
	if t := c.Tool; t != nil {
		n += size(t.Tools)
		if t.RoundTrip != nil {
			// the answer's tool call re-sent (its arguments at most the
			// size of the tool's schema) and the tool's result
			n += size(t.Tools) + utf8.RuneCountInString(t.RoundTrip.Result)
		}
	}
	if c.Stop != nil {
		n += size(c.Stop.Sequences)
	}
	return n
}
