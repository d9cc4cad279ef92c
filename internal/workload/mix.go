package workload

import (
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// Class is one kind of request in the mix.
type Class struct {
	Name   string
	Weight float64 // relative share of arrivals; > 0
	Prompt PromptSource
	// InputLen is the target prompt length in tokens; required when the
	// prompt source generates text (synthetic), ignored otherwise.
	InputLen LengthDist
	// OutputLen is sent as max_tokens / max_output_tokens; nil sends none
	// (the server's default applies).
	OutputLen LengthDist
	Gates     stats.Gates
	// CacheBustFraction of this class's requests get a unique prefix on
	// their first message, so a prefix cache cannot serve them. In [0, 1].
	CacheBustFraction float64
}

// Request is what the Mix chose for one arrival.
type Request struct {
	Class       string
	Gates       stats.Gates
	Params      protocol.Params // Model is left for the caller to set
	InputTokens int             // the drawn target input length (0 when the source ignores it)
	CacheBusted bool
}

// Mix picks a class per arrival by weight and builds its request. The
// sequence of choices, lengths and prompt text is a pure function of the
// seed; cache-bust prefixes also carry a per-Mix run nonce (random unless
// set with WithRunNonce) so that two runs with the same seed do not share a
// prefix. Safe for concurrent use (calls are serialised).
type Mix struct {
	mu      sync.Mutex
	rng     *rand.Rand
	classes []Class
	cum     []float64 // cumulative normalised weights
	nonce   uint64
	n       uint64
}

// Option configures a Mix.
type Option func(*Mix)

// WithRunNonce fixes the run nonce of cache-bust prefixes (for reproducible
// tests; production runs should keep the random default).
func WithRunNonce(n uint64) Option { return func(m *Mix) { m.nonce = n } }

// NewMix validates classes and returns a mix seeded with seed.
func NewMix(seed uint64, classes []Class, opts ...Option) (*Mix, error) {
	if len(classes) == 0 {
		return nil, errors.New("workload: at least one class is required")
	}
	m := &Mix{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), classes: append([]Class(nil), classes...)}
	seen := map[string]bool{}
	total := 0.0
	for i, c := range classes {
		key := fmt.Sprintf("workload: classes[%d]", i)
		switch {
		case c.Name == "":
			return nil, fmt.Errorf("%s: name is required", key)
		case seen[c.Name]:
			return nil, fmt.Errorf("%s: duplicate class name %q", key, c.Name)
		case !(c.Weight > 0) || math.IsInf(c.Weight, 0):
			return nil, fmt.Errorf("%s (%s): weight %v must be a positive number", key, c.Name, c.Weight)
		case c.Prompt == nil:
			return nil, fmt.Errorf("%s (%s): prompt source is required", key, c.Name)
		case c.Prompt.NeedsInputLength() && c.InputLen == nil:
			return nil, fmt.Errorf("%s (%s): a %s prompt needs an input length distribution", key, c.Name, c.Prompt.Kind())
		case !(c.CacheBustFraction >= 0 && c.CacheBustFraction <= 1):
			return nil, fmt.Errorf("%s (%s): cache_bust_fraction %v must be in [0, 1]", key, c.Name, c.CacheBustFraction)
		}
		seen[c.Name] = true
		total += c.Weight
	}
	acc := 0.0
	for _, c := range classes {
		acc += c.Weight / total
		m.cum = append(m.cum, acc)
	}
	m.cum[len(m.cum)-1] = 1
	var err error
	if m.nonce, err = RunNonce(); err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// Next picks the class of the next arrival and builds its request.
func (m *Mix) Next() Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	u := m.rng.Float64()
	i := 0
	for i < len(m.cum)-1 && u >= m.cum[i] {
		i++
	}
	c := &m.classes[i]
	req := Request{Class: c.Name, Gates: c.Gates}
	if c.Prompt.NeedsInputLength() {
		req.InputTokens = c.InputLen.Sample(m.rng)
	}
	msgs := c.Prompt.Messages(m.rng, req.InputTokens)
	if c.OutputLen != nil {
		req.Params.MaxTokens = c.OutputLen.Sample(m.rng)
	}
	if c.CacheBustFraction > 0 && m.rng.Float64() < c.CacheBustFraction && len(msgs) > 0 {
		req.CacheBusted = true
		msgs[0].Content = fmt.Sprintf("[%016x-%d] ", m.nonce, m.n) + msgs[0].Content
	}
	req.Params.Messages = msgs
	return req
}

// RunNonce draws a run's nonce: random per run, so that two runs with the
// same seed share no cache-busting or cold-twin prefix.
func RunNonce() (uint64, error) {
	var b [8]byte
	if _, err := crand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("workload: drawing a run nonce: %w", err)
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}
