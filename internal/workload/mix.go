package workload

import (
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/schedule"
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
	// Checks make the class an answer canary: its requests are these
	// checks in rotation (CheckParams), and Prompt, InputLen, OutputLen
	// and CacheBustFraction are not used.
	Checks []answercheck.Check
	// RecordExcerpt keeps an excerpt of each check's answer on its record.
	RecordExcerpt bool
}

// Request is what the Mix chose for one arrival.
type Request struct {
	Seq         uint64 // the request's number in its mix, from 1
	Class       string
	Gates       stats.Gates
	Params      protocol.Params // Model is left for the caller to set
	InputTokens int             // the drawn target input length (0 when the source ignores it)
	CacheBusted bool
}

// Weights are the classes' weights, which split a rate among them and
// pick each arrival's class (schedule.Weights).
func Weights(classes []Class) schedule.Weights {
	return schedule.WeightsOf(classes, func(c Class) float64 { return c.Weight })
}

// Mix picks a class per arrival by weight and builds its request. Request
// n (the n-th call of Next, from 1) is a pure function of the seed and n:
// its class, lengths, cache busting and prompt text are drawn from a random
// stream of its own, derived from the two, so a seeded run sends the same
// request n whatever order concurrent callers take their numbers in.
// Cache-bust prefixes also carry a per-Mix run nonce (random unless set
// with WithRunNonce) so that two runs with the same seed do not share a
// prefix. Safe for concurrent use: callers share only the request counter
// (an atomic), and each builds its prompt on its own.
type Mix struct {
	seed    uint64
	classes []Class
	cum     []float64 // cumulative normalised weights
	nonce   uint64
	n       atomic.Uint64 // requests numbered so far
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
	m := &Mix{seed: seed ^ 0x9e3779b97f4a7c15, classes: append([]Class(nil), classes...)}
	seen := map[string]bool{}
	for i, c := range classes {
		key := fmt.Sprintf("workload: classes[%d]", i)
		switch {
		case c.Name == "":
			return nil, fmt.Errorf("%s: name is required", key)
		case seen[c.Name]:
			return nil, fmt.Errorf("%s: duplicate class name %q", key, c.Name)
		case !(c.Weight > 0) || math.IsInf(c.Weight, 0):
			return nil, fmt.Errorf("%s (%s): weight %v must be a positive number", key, c.Name, c.Weight)
		case len(c.Checks) > 0: // a canary class: its checks are its prompts
		case c.Prompt == nil:
			return nil, fmt.Errorf("%s (%s): prompt source is required", key, c.Name)
		case c.Prompt.NeedsInputLength() && c.InputLen == nil:
			return nil, fmt.Errorf("%s (%s): a %s prompt needs an input length distribution", key, c.Name, c.Prompt.Kind())
		case !(c.CacheBustFraction >= 0 && c.CacheBustFraction <= 1):
			return nil, fmt.Errorf("%s (%s): cache_bust_fraction %v must be in [0, 1]", key, c.Name, c.CacheBustFraction)
		}
		seen[c.Name] = true
	}
	m.cum = Weights(classes).Cumulative()
	var err error
	if m.nonce, err = RunNonce(); err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// Next numbers the next arrival and builds its request.
func (m *Mix) Next() Request { return m.at(m.reserve()) }

// reserve numbers the next arrival (from 1).
func (m *Mix) reserve() uint64 { return m.n.Add(1) }

// at builds request n. Its random stream draws, in this order, the class,
// the input length, the output length and whether it is cache busted, then
// the prompt text: the lengths do not depend on what the prompt source
// draws (a cold twin's mix, seeded as its class's, draws the class's
// lengths request by request). A source numbered by request (a
// shared-prefix class or its cold twin) builds request n-1 of its own.
func (m *Mix) at(n uint64) Request {
	r := requestRand(m.seed, n)
	c := &m.classes[schedule.Pick(m.cum, r.Float64())]
	req := Request{Seq: n, Class: c.Name, Gates: c.Gates}
	if len(c.Checks) > 0 {
		req.Params = CheckParams(c.checkAt(n), c.RecordExcerpt)
		return req
	}
	if c.Prompt.NeedsInputLength() {
		req.InputTokens = c.InputLen.Sample(r)
	}
	if c.OutputLen != nil {
		req.Params.MaxTokens = c.OutputLen.Sample(r)
	}
	bust := c.CacheBustFraction > 0 && r.Float64() < c.CacheBustFraction
	var msgs []protocol.Message
	if ns, ok := c.Prompt.(numberedSource); ok {
		msgs = ns.messagesAt(n-1, req.InputTokens)
	} else {
		msgs = c.Prompt.Messages(r, req.InputTokens)
	}
	if bust && len(msgs) > 0 {
		req.CacheBusted = true
		msgs[0].Content = fmt.Sprintf("[%016x-%d] ", m.nonce, n) + msgs[0].Content
	}
	req.Params.Messages = msgs
	return req
}

// numberedSource is a prompt source whose i-th request (from 0) is a pure
// function of i and its own seed, drawn from no one else's random stream.
type numberedSource interface {
	messagesAt(i uint64, inputTokens int) []protocol.Message
}

// requestRand is request n's random stream under key: the two mixed
// (splitmix64's finaliser) into a PCG's state, so that neighbouring
// request numbers give unrelated streams.
func requestRand(key, n uint64) *rand.Rand {
	a := mix64(key ^ mix64(n))
	return rand.New(rand.NewPCG(a, mix64(a)))
}

// mix64 is splitmix64's step: a bijection of 64 bits whose outputs for
// neighbouring inputs look unrelated.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
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
