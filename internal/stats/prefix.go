package stats

import (
	"sort"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// PrefixMinSample is the fewest ok TTFTs each side of a speedup needs to be
// judged: the project's one minimum for a percentile compared between two
// groups (SaturationMinSample: the fewest TTFTs in each third of a step
// before its trend is judged).
const PrefixMinSample = verdict.SaturationMinSample

// PrefixTailMinSample is the fewest ok TTFTs each side needs before the p95
// speedup is judged: below 20 a p95 is a sample's maximum, one hiccup.
const PrefixTailMinSample = 20

// PrefixSpeedup is the prefix-cache figures of one shared-prefix class
// against its cold twin (docs/figures.md#prefix-cache-speedup): TTFT from
// the planned send time of ok records, each class's own, and the speedup,
// cold over cached, at p50 and p95. Judged is false while either side has
// fewer than PrefixMinSample TTFTs: the speedups are then 0 and shown as
// "too few samples".
type PrefixSpeedup struct {
	Class      string               `json:"class"`
	ColdClass  string               `json:"cold_class"`
	CachedTTFT quantile.Percentiles `json:"-"`
	ColdTTFT   quantile.Percentiles `json:"-"`
	Judged     bool                 `json:"judged"`
	JudgedP95  bool                 `json:"judged_p95"` // both sides have PrefixTailMinSample TTFTs
	SpeedupP50 float64              `json:"speedup_p50,omitempty"`
	SpeedupP95 float64              `json:"speedup_p95,omitempty"`
	// Cached and Cold are the cached-token counts each side's server
	// reported (CacheTokens.Known false when it reported none).
	Cached CacheTokens `json:"cached_tokens"`
	Cold   CacheTokens `json:"cold_cached_tokens"`
}

// CacheTokens sums what a server said about its prompt cache over the ok
// records where it said it (ledger.Record.CachedPromptTokens): Records of
// them, their cached prompt tokens and their prompt tokens. Fraction is
// Cached / Prompt; Known is false when no record reported a count ("not
// reported", never 0).
type CacheTokens struct {
	Records  int     `json:"records"`
	Cached   int64   `json:"cached"`
	Prompt   int64   `json:"prompt"`
	Fraction float64 `json:"fraction"`
	Known    bool    `json:"known"`
}

// cachedOfPrompt is the cached prompt tokens r's server reported and the
// prompt tokens they are part of (ledger.Record.CachedOfPrompt); ok only
// for a pair that fits (a prompt, and cached at most it). The one rule of
// the prefix-cache and per-turn figures.
func cachedOfPrompt(r *ledger.Record) (n, prompt int, ok bool) {
	n, prompt, ok = r.CachedOfPrompt()
	if !ok || prompt <= 0 || n > prompt {
		return 0, 0, false
	}
	return n, prompt, true
}

func (c *CacheTokens) add(r *ledger.Record) {
	n, prompt, ok := cachedOfPrompt(r)
	if !ok {
		return
	}
	c.Records++
	c.Cached += int64(n)
	c.Prompt += int64(prompt)
}

func (c CacheTokens) done() CacheTokens {
	c.Known = c.Records > 0
	if c.Prompt > 0 {
		c.Fraction = float64(c.Cached) / float64(c.Prompt)
	}
	return c
}

// prefixAcc folds the ok records of shared-prefix classes and their cold
// twins (Config.PrefixPairs); not safe for concurrent use (the
// Accumulator's lock guards it).
type prefixAcc struct {
	pairs map[string]string      // class → its cold twin
	side  map[string]*prefixSide // by class name, either side
}

type prefixSide struct {
	ttft  *quantile.Dist
	cache CacheTokens
}

func newPrefixAcc(pairs map[string]string, sampleCap int) *prefixAcc {
	if len(pairs) == 0 {
		return nil
	}
	a := &prefixAcc{pairs: pairs, side: map[string]*prefixSide{}}
	for c, cold := range pairs {
		a.side[c] = &prefixSide{ttft: quantile.NewDist(sampleCap)}
		a.side[cold] = &prefixSide{ttft: quantile.NewDist(sampleCap)}
	}
	return a
}

// add takes an ok record.
func (a *prefixAcc) add(r *ledger.Record) {
	s := a.side[r.Class]
	if s == nil {
		return
	}
	s.ttft.AddIf(r.TTFT())
	s.cache.add(r)
}

// figures are the speedups, by class name.
func (a *prefixAcc) figures() []PrefixSpeedup {
	out := make([]PrefixSpeedup, 0, len(a.pairs))
	for c, cold := range a.pairs {
		sc, sw := a.side[c], a.side[cold]
		out = append(out, Speedup(c, cold, sc.ttft.Percentiles(), sw.ttft.Percentiles(), sc.cache.done(), sw.cache.done()))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Class < out[j].Class })
	return out
}

// Speedup judges one class against its cold twin from their TTFT
// percentiles and cache counts.
func Speedup(class, cold string, cached, coldTTFT quantile.Percentiles, cachedTokens, coldTokens CacheTokens) PrefixSpeedup {
	s := PrefixSpeedup{Class: class, ColdClass: cold, CachedTTFT: cached, ColdTTFT: coldTTFT, Cached: cachedTokens, Cold: coldTokens}
	s.Judged = cached.Count >= PrefixMinSample && coldTTFT.Count >= PrefixMinSample && cached.P50 > 0 && cached.P95 > 0
	if s.Judged {
		s.SpeedupP50 = float64(coldTTFT.P50) / float64(cached.P50)
	}
	s.JudgedP95 = s.Judged && cached.Count >= PrefixTailMinSample && coldTTFT.Count >= PrefixTailMinSample
	if s.JudgedP95 {
		s.SpeedupP95 = float64(coldTTFT.P95) / float64(cached.P95)
	}
	return s
}
