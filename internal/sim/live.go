package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
)

// VersionHeader is the response header that carries Config.Version.
const VersionHeader = "X-Model-Version"

// maxVersionBytes bounds Config.Version (it is a header value).
const maxVersionBytes = 128

// ValidVersion reports whether v (a deploy identity) can be sent as a header value and a JSON
// string as it is: printable ASCII, at most 128 bytes.
func ValidVersion(v string) error {
	if len(v) > maxVersionBytes {
		return fmt.Errorf("%d bytes is longer than %d", len(v), maxVersionBytes)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x21 || c > 0x7e {
			return fmt.Errorf("byte %d (%#x) is not printable ASCII", i, c)
		}
	}
	return nil
}

// State is what can change while the simulator runs (a "deploy"): its
// version, its service slots (and so its capacity), its admission limit,
// the fraction of requests it fails, its prefill time, its prefix cache and
// the kinds of answers it gets wrong.
type State struct {
	Version        string  `json:"version"`
	Slots          int     `json:"slots"`
	AdmissionLimit int     `json:"admission_limit"`
	ErrorFraction  float64 `json:"error_fraction"`
	// TTFT is the prefill time distribution (seconds): a slower one is a
	// deploy that answers every request, late.
	TTFT Dist `json:"ttft"`
	// Capacity is Slots / ServiceTime, requests per second (read only).
	Capacity float64 `json:"capacity_rps"`
	// PrefixCache says whether the prefix cache is on; false is a deploy
	// that lost it (every prompt computed in full).
	PrefixCache bool `json:"prefix_cache"`
	// PrefixCacheBlocks bounds the prefix cache (a smaller KV pool keeps
	// fewer prefixes).
	PrefixCacheBlocks int `json:"prefix_cache_blocks"`
	// PrefixCacheUsedBlocks is how many blocks it holds now (read only).
	PrefixCacheUsedBlocks int `json:"prefix_cache_used_blocks"`
	// PrefillPerToken is the prefill time per uncached prompt token, in
	// seconds (read only: Config.PrefillPerToken).
	PrefillPerToken float64 `json:"prefill_per_token_seconds"`
	// WrongAnswers are the kinds of library answers given wrong on purpose
	// (never null; [] when all are right).
	WrongAnswers []string `json:"wrong_answers"`
}

// Update changes the fields it sets (nil: unchanged).
type Update struct {
	Version        *string  `json:"version,omitempty"`
	Slots          *int     `json:"slots,omitempty"`
	AdmissionLimit *int     `json:"admission_limit,omitempty"`
	ErrorFraction  *float64 `json:"error_fraction,omitempty"`
	TTFT           *Dist    `json:"ttft,omitempty"`
	// PrefixCache turns the prefix cache on or off; off empties it, so
	// turning it on again starts cold.
	PrefixCache       *bool `json:"prefix_cache,omitempty"`
	PrefixCacheBlocks *int  `json:"prefix_cache_blocks,omitempty"`
	// WrongAnswers replaces the kinds answered wrong ([] = all right).
	WrongAnswers *[]string `json:"wrong_answers,omitempty"`
}

// live holds the settings Update may change; the rest of Config is fixed.
type live struct {
	mu    sync.RWMutex
	cfg   Config // Version, Slots, AdmissionLimit, ErrorFraction, TTFT, PrefixCache.Enabled and .Blocks, WrongAnswers are live
	slots *slotPool
}

func (l *live) get() Config {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cfg
}

// State returns the simulator's current live settings.
func (s *Server) State() State {
	c := s.live.get()
	return State{Version: c.Version, Slots: c.Slots, AdmissionLimit: c.AdmissionLimit, ErrorFraction: c.ErrorFraction, TTFT: c.TTFT, Capacity: c.Capacity(),
		PrefixCache: c.PrefixCache.Enabled, PrefixCacheBlocks: c.PrefixCache.Blocks, PrefixCacheUsedBlocks: s.pc.size(),
		PrefillPerToken: c.PrefillPerToken.Seconds(), WrongAnswers: wrongOf(&c).names()}
}

// Update applies u while the server runs, all or nothing: a change that
// would not validate is refused with an error naming the field. Fewer slots
// take effect as requests in service finish (none is cut short); more slots
// start queued requests at once. Responses from then on carry the new
// version.
func (s *Server) Update(u Update) (State, error) {
	s.live.mu.Lock()
	next := s.live.cfg
	if u.Version != nil {
		next.Version = *u.Version
	}
	if u.Slots != nil {
		next.Slots = *u.Slots
	}
	if u.AdmissionLimit != nil {
		next.AdmissionLimit = *u.AdmissionLimit
	}
	if u.ErrorFraction != nil {
		next.ErrorFraction = *u.ErrorFraction
	}
	if u.TTFT != nil {
		next.TTFT = *u.TTFT
	}
	if u.PrefixCache != nil {
		next.PrefixCache.Enabled = *u.PrefixCache
	}
	if u.PrefixCacheBlocks != nil {
		next.PrefixCache.Blocks = *u.PrefixCacheBlocks
	}
	if u.WrongAnswers != nil {
		next.WrongAnswers = *u.WrongAnswers
	}
	if err := next.Validate(); err != nil {
		s.live.mu.Unlock()
		return s.State(), err
	}
	next.WrongAnswers = wrongOf(&next).names()
	s.live.cfg = next
	s.live.slots.setLimit(next.Slots)
	s.pc.setLimit(next.PrefixCache.Blocks)
	if !next.PrefixCache.Enabled {
		s.pc.reset() // a deploy without the cache keeps nothing
	}
	s.live.mu.Unlock()
	return s.State(), nil
}

// failDraw reports whether request n is one of the ErrorFraction failed on
// purpose; the draw has its own generator, so other draws are unchanged.
func failDraw(seed, n uint64, fraction float64) bool {
	if fraction <= 0 {
		return false
	}
	return rand.New(rand.NewPCG(seed^0x5eed_fa11, n)).Float64() < fraction
}

// handleState serves GET and POST /admin/state.
func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		writeError(w, apiChat, http.StatusUnauthorized, 0)
		return
	}
	if r.Method == http.MethodPost {
		var u Update
		dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&u); err != nil {
			http.Error(w, "admin/state: want a JSON object with version, slots, admission_limit, error_fraction, ttft, prefix_cache, prefix_cache_blocks or wrong_answers", http.StatusBadRequest)
			return
		}
		if _, err := s.Update(u); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s.State())
}

// slotPool is a FIFO semaphore whose size can change while requests wait.
type slotPool struct {
	mu      sync.Mutex
	limit   int
	used    int
	waiters []*slotWaiter
}

type slotWaiter struct {
	ch      chan struct{}
	granted bool
}

func newSlotPool(n int) *slotPool { return &slotPool{limit: n} }

// tryAcquire takes a slot when one is free and nobody waits.
func (p *slotPool) tryAcquire() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.waiters) == 0 && p.used < p.limit {
		p.used++
		return true
	}
	return false
}

// enqueue joins the queue; the waiter's channel closes when it holds a slot.
func (p *slotPool) enqueue() *slotWaiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := &slotWaiter{ch: make(chan struct{})}
	p.waiters = append(p.waiters, w)
	p.grantLocked()
	return w
}

// leave gives up a place in the queue, or the slot if it was granted
// meanwhile.
func (p *slotPool) leave(w *slotWaiter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.granted {
		p.used--
		p.grantLocked()
		return
	}
	for i, x := range p.waiters {
		if x == w {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			return
		}
	}
}

// release returns a slot.
func (p *slotPool) release() {
	p.mu.Lock()
	p.used--
	p.grantLocked()
	p.mu.Unlock()
}

func (p *slotPool) setLimit(n int) {
	p.mu.Lock()
	p.limit = n
	p.grantLocked()
	p.mu.Unlock()
}

func (p *slotPool) grantLocked() {
	for p.used < p.limit && len(p.waiters) > 0 {
		w := p.waiters[0]
		p.waiters[0] = nil
		p.waiters = p.waiters[1:]
		w.granted = true
		p.used++
		close(w.ch)
	}
}
