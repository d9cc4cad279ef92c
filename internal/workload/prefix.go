package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"

	"github.com/llmprobe/llmprobe/internal/protocol"
)

// Shared-prefix prompts: the building block of prefix-cache classes
// (docs/workloads.md#shared-prefix-prompts). A request is a system message,
// the prefix, and a user message, the suffix. A shared request's prefix is
// one of Groups fixed texts, picked by Choice; its cold twin has a prefix of
// the same length that no other prompt shares.
//
// Every generated text starts with a marker that keeps the prompts apart
// where a prefix cache looks, at the start:
//
//	group prefix   ^GGGGGGGG.SSSSSSSS   G: the group number's hex digits, lowest first, each XOR a seed digit
//	cold prefix    ~NNNNNNNN.RRRRRRRR   N: the request number's hex digits, lowest first, each XOR a run-nonce digit
//	suffix         #NNNNNNNN            (unique per request, so no two whole prompts are equal)
//
// followed by a space and words. Two numbers that differ differ in some hex
// digit, and digit i is character i+1, so two cold prefixes of a run (or two
// groups) differ within their first 9 characters, hence within their first
// 9 tokens: inside the first block of a block-level prefix cache whose
// blocks hold at least 9 tokens (vLLM's default is 16), so their block
// chains share nothing. A cold prefix differs from a group prefix, and from
// the built-in synthetic prompts (words) and cache-bust prompts ("["), at its
// first character. The R digits are the run nonce's, random per run, so a
// restarted prober does not meet its last run's cold prefixes in the cache.
// What a server's chat template puts before the system message is common to
// every request and cannot be avoided; a token-level cache (SGLang's radix
// tree, llama.cpp) may also reuse the tokens of the marker's first
// characters when they agree — at most 9 characters.

// GroupChoice is how a shared-prefix request picks its group.
type GroupChoice string

// Group choices.
const (
	GroupRoundRobin GroupChoice = "round_robin" // 0, 1, …, Groups-1, 0, …: every group equally and as far apart as possible
	GroupUniform    GroupChoice = "uniform"     // uniformly at random
	GroupZipf       GroupChoice = "zipf"        // group k with probability ∝ (k+1)^-ZipfS: a few hot prefixes, a long tail
)

// Bounds on a shared-prefix spec.
const (
	MinPrefixPartTokens = 8         // the shortest prefix or suffix: room for its marker
	MaxPrefixPartTokens = 1_000_000 // the longest prefix or suffix
	MaxPrefixGroups     = 10_000
	maxPrefixChars      = 64 << 20 // the group prefixes held in memory: Groups × PrefixTokens × CharsPerToken
)

// PrefixSpec describes shared-prefix prompts. Lengths are in tokens of the
// synthetic generator's estimate (CharsPerToken characters each).
type PrefixSpec struct {
	PrefixTokens int
	Groups       int
	Choice       GroupChoice
	ZipfS        float64 // the zipf exponent (> 1); only for GroupZipf
	SuffixTokens int
}

// Validate reports the first invalid field, named by its config key.
func (s PrefixSpec) Validate() error {
	part := func(key string, n int) error {
		if n < MinPrefixPartTokens || n > MaxPrefixPartTokens {
			return fmt.Errorf("%s %d must be in %d..%d tokens", key, n, MinPrefixPartTokens, MaxPrefixPartTokens)
		}
		return nil
	}
	if err := part("prefix_tokens", s.PrefixTokens); err != nil {
		return err
	}
	if err := part("suffix_tokens", s.SuffixTokens); err != nil {
		return err
	}
	if s.Groups < 1 || s.Groups > MaxPrefixGroups {
		return fmt.Errorf("groups %d must be in 1..%d", s.Groups, MaxPrefixGroups)
	}
	if int64(s.Groups)*int64(s.PrefixTokens)*CharsPerToken > maxPrefixChars {
		return fmt.Errorf("groups × prefix_tokens = %d tokens is more than %d", s.Groups*s.PrefixTokens, maxPrefixChars/CharsPerToken)
	}
	switch s.Choice {
	case GroupRoundRobin, GroupUniform:
	case GroupZipf:
		if !(s.ZipfS > 1) || math.IsInf(s.ZipfS, 0) {
			return fmt.Errorf("zipf_s %v must be a number above 1", s.ZipfS)
		}
	default:
		return fmt.Errorf("group choice %q: want round_robin, uniform or zipf", s.Choice)
	}
	return nil
}

// PrefixPrompt is one generated request.
type PrefixPrompt struct {
	Messages []protocol.Message // system (the prefix), then user (the suffix)
	Group    int                // the prefix group; -1 for a cold twin
}

// Cold reports whether the prompt is a cold twin.
func (p PrefixPrompt) Cold() bool { return p.Group < 0 }

// PrefixGen generates shared-prefix prompts and their cold twins. Request
// i (its i-th call, from 0, shared and cold counted together) is a pure
// function of the seed, the run nonce and i: its group (by Choice) and text
// are drawn from a random stream of its own, derived from the seed and the
// request's number. Safe for concurrent use: callers share only the call
// counters (atomics), and each builds its prompt on its own.
type PrefixGen struct {
	spec     PrefixSpec
	stream   uint64 // keys each request's random stream (requestRand)
	nonce    uint64
	prefixes []string // the group prefixes, from the seed alone
	lane     uint64   // request i's number is lane + i × stride
	stride   uint64   // 1, or the lanes of Twin

	calls  atomic.Uint64 // Shared and Cold calls so far
	shared atomic.Uint64 // Shared calls so far: the round-robin position
}

// NewPrefixGen validates spec and builds the group prefixes from seed.
// runNonce keeps cold prefixes apart between runs: production callers draw
// it at random per run (as Mix does); tests fix it.
func NewPrefixGen(spec PrefixSpec, seed, runNonce uint64) (*PrefixGen, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("workload: shared prefix: %w", err)
	}
	g := &PrefixGen{spec: spec, stream: seed ^ 0x243f6a8885a308d3, nonce: runNonce, stride: 1}
	for k := range spec.Groups {
		r := rand.New(rand.NewPCG(seed, uint64(k)^0xb7e151628aed2a6b))
		g.prefixes = append(g.prefixes, markedText(r, '^', uint64(k), seed, spec.PrefixTokens))
	}
	if spec.Choice == GroupZipf && rand.NewZipf(rand.New(rand.NewPCG(seed, 0)), spec.ZipfS, 1, uint64(spec.Groups-1)) == nil {
		return nil, errors.New("workload: shared prefix: zipf parameters refused")
	}
	return g, nil
}

// Spec returns the generator's spec.
func (g *PrefixGen) Spec() PrefixSpec { return g.spec }

// Shared returns the next shared-prefix request: its group's prefix and a
// suffix of its own.
func (g *PrefixGen) Shared() PrefixPrompt { return g.SharedN(g.spec.SuffixTokens) }

// SharedN is Shared with a suffix of suffixTokens (at least
// MinPrefixPartTokens, the room for its marker).
func (g *PrefixGen) SharedN(suffixTokens int) PrefixPrompt {
	return g.sharedAt(g.shared.Add(1)-1, g.calls.Add(1)-1, suffixTokens)
}

// Cold returns the next cold twin: a prefix and a suffix of the shared
// requests' lengths, the prefix shared with nothing.
func (g *PrefixGen) Cold() PrefixPrompt { return g.ColdN(g.spec.SuffixTokens) }

// ColdN is Cold with a suffix of suffixTokens (at least
// MinPrefixPartTokens).
func (g *PrefixGen) ColdN(suffixTokens int) PrefixPrompt {
	return g.coldAt(g.calls.Add(1)-1, suffixTokens)
}

// sharedAt builds shared request i, the rr-th shared one (round robin's
// position).
func (g *PrefixGen) sharedAt(rr, i uint64, suffixTokens int) PrefixPrompt {
	n := g.lane + i*g.stride
	r := requestRand(g.stream, n)
	var k int
	switch g.spec.Choice {
	case GroupRoundRobin:
		k = int(rr % uint64(g.spec.Groups))
	case GroupUniform:
		k = r.IntN(g.spec.Groups)
	case GroupZipf:
		k = int(rand.NewZipf(r, g.spec.ZipfS, 1, uint64(g.spec.Groups-1)).Uint64())
	}
	return PrefixPrompt{Group: k, Messages: []protocol.Message{
		{Role: "system", Content: g.prefixes[k]},
		{Role: "user", Content: g.suffix(r, n, suffixTokens)},
	}}
}

// coldAt builds request i, a cold twin.
func (g *PrefixGen) coldAt(i uint64, suffixTokens int) PrefixPrompt {
	n := g.lane + i*g.stride
	r := requestRand(g.stream, n)
	prefix := markedText(r, '~', n, g.nonce, g.spec.PrefixTokens)
	return PrefixPrompt{Group: -1, Messages: []protocol.Message{
		{Role: "system", Content: prefix},
		{Role: "user", Content: g.suffix(r, n, suffixTokens)},
	}}
}

// Twin returns a generator of the same spec, group prefixes (shared, not
// copied) and run nonce, with random streams of its own keyed by seed and
// request numbers of its own: lane, lane+lanes, lane+2·lanes, …. A
// class's cold twins are drawn from a Twin, so that neither sequence
// depends on how the two classes' requests interleave; giving each
// shared-prefix class of a target its own lane of as many as there are
// keeps every cold prefix of the target distinct (numbers are unique for
// the first 2³²/lanes requests). lanes < 1 is 1; lane is taken modulo
// lanes.
func (g *PrefixGen) Twin(seed uint64, lane, lanes int) *PrefixGen {
	lanes = max(lanes, 1)
	lane = ((lane % lanes) + lanes) % lanes
	return &PrefixGen{spec: g.spec, stream: seed ^ 0x452821e638d01377, nonce: g.nonce, prefixes: g.prefixes,
		lane: uint64(lane), stride: uint64(lanes)}
}

// suffix is request n's suffix.
func (g *PrefixGen) suffix(r *rand.Rand, n uint64, tokens int) string {
	return markedText(r, '#', n, g.nonce, max(tokens, MinPrefixPartTokens))
}

// markedText is exactly tokens × CharsPerToken characters: mark, the eight
// hex digits of n from the lowest, each XOR the matching digit of key, then
// (except for a suffix) a dot and the eight high digits of key, a space,
// and words.
func markedText(r *rand.Rand, mark byte, n, key uint64, tokens int) string {
	const hex = "0123456789abcdef"
	chars := tokens * CharsPerToken
	var b strings.Builder
	b.Grow(chars + 32) // the words overshoot by at most 12 bytes: no second allocation
	b.WriteByte(mark)
	for i := range 8 {
		b.WriteByte(hex[(n>>(4*i)^key>>(4*i))&0xf])
	}
	if mark != '#' {
		b.WriteByte('.')
		for i := 8; i < 16; i++ {
			b.WriteByte(hex[key>>(4*i)&0xf])
		}
	}
	b.WriteByte(' ')
	writeWords(&b, r, ((chars-b.Len())/CharsPerToken+1)*CharsPerToken)
	return b.String()[:chars]
}
