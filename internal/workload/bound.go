package workload

import (
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/internal/protocol"
)

// UsageBound is the most one request built from p can be believed to
// cost, in tokens: its prompt estimate (its characters at CharsPerToken,
// rounded up, as the synthetic generator sizes prompts; a check's schema,
// tools and stop sequences included) + the max tokens
// it asks for. A budget charges it when the server's usage cannot be true.
// Without max tokens (the server's default applies) there is no output
// bound, and only the prompt estimate is returned.
func UsageBound(p protocol.Params) int64 {
	chars := utf8.RuneCountInString(p.Prompt)
	for _, m := range p.Messages {
		chars += utf8.RuneCountInString(m.Content)
	}
	if p.Check != nil {
		chars += checkChars(p.Check)
	}
	return int64((chars+CharsPerToken-1)/CharsPerToken) + int64(max(p.MaxTokens, 0))
}
