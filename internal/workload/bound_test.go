package workload

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/protocol"
)

// TestUsageBound: the prompt's characters at CharsPerToken (rounded up)
// plus max tokens; a synthetic prompt of n tokens is bounded near n.
func TestUsageBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    protocol.Params
		want int64
	}{
		{"messages and max tokens", protocol.Params{Messages: []protocol.Message{{Content: strings.Repeat("a", 40)}, {Content: "abc"}}, MaxTokens: 8}, 11 + 8},
		{"completion prompt, runes not bytes", protocol.Params{Prompt: strings.Repeat("é", 8), MaxTokens: 2}, 2 + 2},
		{"no max tokens: the prompt only", protocol.Params{Prompt: "abcd"}, 1},
		{"nothing", protocol.Params{}, 0},
	} {
		if got := UsageBound(tc.p); got != tc.want {
			t.Errorf("%s: bound %d, want %d", tc.name, got, tc.want)
		}
	}
	msgs := Synthetic{}.Messages(rand.New(rand.NewPCG(1, 2)), 500)
	if got := UsageBound(protocol.Params{Messages: msgs}); got < 400 || got > 650 {
		t.Errorf("a 500-token synthetic prompt is bounded at %d tokens, want about 500", got)
	}
}
