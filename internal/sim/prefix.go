package sim

import (
	"container/list"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"
	"unicode/utf8"
)

// The simulator's prefix cache, modelled on vLLM's automatic prefix
// caching. A prompt is cut into blocks of BlockTokens tokens (a token being
// CharsPerToken characters of the prompt text, as the simulator counts
// prompt tokens); block i is identified by a hash of block i-1's hash and
// its own text, so a block's hash names the whole prefix up to it (the
// chain's root is the model name). Only full blocks are cached. A request
// reuses its longest run of leading blocks found in the cache, at most all
// but its last token (a server must compute at least one prompt token), and
// its prefill costs PrefillPerToken for each prompt token not reused. Its
// blocks enter the cache when its prefill ends (its first chunk); the cache
// holds at most Blocks blocks and evicts the least recently used. Each
// request touches its blocks from the last to the first, so within a chain
// the tail is evicted before the root, as vLLM frees blocks.
//
// The prompt text hashed is the text of the messages in order (system or
// instructions first), without roles: the same words as a system message
// or as a user message are the same prefix here.

// CharsPerToken is the simulator's token estimate: a prompt of n
// characters (runes) is ceil(n/4) tokens.
const CharsPerToken = 4

// PrefixCacheConfig configures the simulated prefix cache.
type PrefixCacheConfig struct {
	// Enabled turns the cache on (the default). Off, no prompt reuses
	// anything and the cache holds nothing; POST /admin/state
	// {"prefix_cache": false} turns it off live (a deploy that lost it).
	Enabled bool `koanf:"enabled" json:"enabled" yaml:"enabled"`
	// BlockTokens is the size of a cache block in tokens (vLLM's default
	// block size is 16).
	BlockTokens int `koanf:"block_tokens" json:"block_tokens" yaml:"block_tokens"`
	// Blocks bounds the cache: at most this many blocks are kept.
	Blocks int `koanf:"blocks" json:"blocks" yaml:"blocks"`
}

// Bounds on the prefix cache's settings.
const (
	maxBlockTokens     = 4096
	maxCacheBlocks     = 1 << 24
	maxPrefillPerToken = time.Second
)

// Validate reports the first invalid field.
func (p PrefixCacheConfig) Validate() error {
	if p.BlockTokens < 1 || p.BlockTokens > maxBlockTokens {
		return fmt.Errorf("block_tokens %d must be in 1..%d", p.BlockTokens, maxBlockTokens)
	}
	if p.Blocks < 1 || p.Blocks > maxCacheBlocks {
		return fmt.Errorf("blocks %d must be in 1..%d", p.Blocks, maxCacheBlocks)
	}
	return nil
}

func validPrefillPerToken(d time.Duration) error {
	if d < 0 || d > maxPrefillPerToken {
		return errors.New("must be in 0s..1s")
	}
	return nil
}

// prefixCache is an LRU set of block hashes.
type prefixCache struct {
	seed maphash.Seed

	mu    sync.Mutex
	limit int
	lru   list.List // of uint64, most recently used at the front
	index map[uint64]*list.Element
}

func newPrefixCache(limit int) *prefixCache {
	return &prefixCache{seed: maphash.MakeSeed(), limit: limit, index: map[uint64]*list.Element{}}
}

// blocks returns the chained hashes of the full blocks of prompt (runes
// blockTokens × CharsPerToken at a time), rooted at the model name.
func (c *prefixCache) blocks(model string, prompt []byte, blockTokens int) []uint64 {
	per := blockTokens * CharsPerToken
	if len(prompt) < per { // fewer bytes than a block's runes: no full block
		return nil
	}
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(model)
	parent := h.Sum64()
	out := make([]uint64, 0, len(prompt)/per)
	var pb [8]byte
	start, n := 0, 0
	for i := 0; i < len(prompt); {
		if prompt[i] < utf8.RuneSelf {
			i++
		} else {
			_, size := utf8.DecodeRune(prompt[i:])
			i += size
		}
		if n++; n == per {
			h.Reset()
			binary.LittleEndian.PutUint64(pb[:], parent)
			_, _ = h.Write(pb[:])
			_, _ = h.Write(prompt[start:i])
			parent = h.Sum64()
			out = append(out, parent)
			start, n = i, 0
		}
	}
	return out
}

// lookup returns how many leading blocks of hs (at most most) are cached,
// marking them used.
func (c *prefixCache) lookup(hs []uint64, most int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for n < len(hs) && n < most {
		if _, ok := c.index[hs[n]]; !ok {
			break
		}
		n++
	}
	for i := n - 1; i >= 0; i-- {
		c.lru.MoveToFront(c.index[hs[i]])
	}
	return n
}

// insert adds the blocks (or marks them used), evicting the least recently
// used beyond the limit.
func (c *prefixCache) insert(hs []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(hs) - 1; i >= 0; i-- {
		if e, ok := c.index[hs[i]]; ok {
			c.lru.MoveToFront(e)
			continue
		}
		c.index[hs[i]] = c.lru.PushFront(hs[i])
	}
	c.evictLocked()
}

func (c *prefixCache) evictLocked() {
	for c.lru.Len() > c.limit {
		e := c.lru.Back()
		delete(c.index, e.Value.(uint64))
		c.lru.Remove(e)
	}
}

// reset empties the cache.
func (c *prefixCache) reset() {
	c.mu.Lock()
	c.lru.Init()
	clear(c.index)
	c.mu.Unlock()
}

// setLimit changes the bound, evicting at once down to it.
func (c *prefixCache) setLimit(n int) {
	c.mu.Lock()
	c.limit = n
	c.evictLocked()
	c.mu.Unlock()
}

// size is the number of cached blocks.
func (c *prefixCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// prefixLookup is one request's use of the cache.
type prefixLookup struct {
	blocks  []uint64 // the prompt's full blocks, to insert when its prefill ends; nil when the cache is off
	cached  int      // prompt tokens reused from the cache
	prefill time.Duration
}

// lookupPrefix looks the request's prompt up in the cache under the live
// settings lc and returns what it reuses and its prompt-dependent prefill
// time, PrefillPerToken × (prompt tokens − cached tokens).
func (s *Server) lookupPrefix(lc Config, req request) prefixLookup {
	tokens := req.promptTokens()
	var l prefixLookup
	if pc := lc.PrefixCache; pc.Enabled {
		l.blocks = s.pc.blocks(req.Model, req.Prompt, pc.BlockTokens)
		// At least one prompt token is computed: a prompt that is all cache
		// hits still recomputes its last block's worth.
		hit := s.pc.lookup(l.blocks, (tokens-1)/pc.BlockTokens)
		l.cached = hit * pc.BlockTokens
		s.met.prefixQueries.Add(float64(tokens))
		s.met.prefixHits.Add(float64(l.cached))
	}
	l.prefill = time.Duration(tokens-l.cached) * lc.PrefillPerToken
	return l
}

// prefillDone puts a request's blocks in the cache, unless the cache was
// turned off meanwhile (under the live lock, so that an Update turning it
// off, which empties it, is never followed by a late insert).
func (s *Server) prefillDone(l prefixLookup) {
	if l.blocks == nil {
		return
	}
	s.live.mu.RLock()
	defer s.live.mu.RUnlock()
	if s.live.cfg.PrefixCache.Enabled {
		s.pc.insert(l.blocks)
	}
}
