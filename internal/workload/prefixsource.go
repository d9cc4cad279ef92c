package workload

import (
	"fmt"
	"log/slog"
	"math/rand/v2"

	"github.com/llmprobe/llmprobe/internal/protocol"
)

// PrefixSource is the prompt source of a shared-prefix class or of its
// cold twin: each request is its generator's next shared request (or cold
// twin), whose suffix is the class's drawn input length. It draws nothing
// from the Mix's random stream, so a class and its twin whose Mixes share
// a seed draw identical length sequences.
type PrefixSource struct {
	gen  *PrefixGen
	cold bool
}

// Prompt source kinds of shared-prefix classes.
const (
	KindSharedPrefix = "shared_prefix"
	KindColdTwin     = "cold_twin"
)

// SharedSource is the prompt source of a shared-prefix class.
func SharedSource(g *PrefixGen) PrefixSource { return PrefixSource{gen: g} }

// ColdSource is the prompt source of a cold twin; give it a Twin of the
// class's generator.
func ColdSource(g *PrefixGen) PrefixSource { return PrefixSource{gen: g, cold: true} }

// Kind implements PromptSource.
func (s PrefixSource) Kind() string {
	if s.cold {
		return KindColdTwin
	}
	return KindSharedPrefix
}

// NeedsInputLength implements PromptSource: the input length is the suffix's.
func (PrefixSource) NeedsInputLength() bool { return true }

// Messages implements PromptSource: a system message (the prefix) and a
// user message (a suffix of inputTokens, at least MinPrefixPartTokens),
// the generator's next request. A Mix does not call it: it asks for its
// request's number (messagesAt).
func (s PrefixSource) Messages(_ *rand.Rand, inputTokens int) []protocol.Message {
	if s.cold {
		return s.gen.ColdN(inputTokens).Messages
	}
	return s.gen.SharedN(inputTokens).Messages
}

// messagesAt is the mix's numbered path: request i of the class (from 0)
// is the generator's request i, a pure function of its seed and i, so a
// seeded run sends the same prompt as request i whatever order concurrent
// callers take their numbers in. The mix a source belongs to is its only
// caller: two mixes (or a mix and direct Messages calls) would number the
// same requests twice.
func (s PrefixSource) messagesAt(i uint64, inputTokens int) []protocol.Message {
	if s.cold {
		return s.gen.coldAt(i, inputTokens).Messages
	}
	return s.gen.sharedAt(i, i, inputTokens).Messages
}

// Spec is the generator's spec.
func (s PrefixSource) Spec() PrefixSpec { return s.gen.Spec() }

// String describes the source by kind and spec, never its text.
func (s PrefixSource) String() string {
	sp := s.gen.Spec()
	return fmt.Sprintf("%s(prefix %d tokens, %d groups, %s)", s.Kind(), sp.PrefixTokens, sp.Groups, sp.Choice)
}

// GoString is String.
func (s PrefixSource) GoString() string { return s.String() }

// LogValue is String.
func (s PrefixSource) LogValue() slog.Value { return slog.StringValue(s.String()) }
