package budget

import (
	"math"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Limits are a target's daily caps; 0 means unlimited.
type Limits struct {
	TokensPerDay   int64
	RequestsPerDay int64
	Zone           *time.Location // whose midnight resets the budget; nil = UTC
}

// Remaining is what is left of today's budget.
type Remaining struct {
	Tokens          int64 // tokens left (never below 0); meaningful when TokensLimited
	Requests        int64 // requests left, counting in-flight ones as spent; meaningful when RequestsLimited
	TokensLimited   bool
	RequestsLimited bool
	TokensUsed      int64 // prompt + completion tokens charged today
	RequestsUsed    int64 // requests sent and finished today
	InFlight        int64 // admitted, not yet charged
	UnknownUsage    int64 // finished sent requests today whose server reported no usage, nor bound known (not charged tokens)
	// InvalidUsage counts finished sent requests today whose server
	// reported usage that cannot be true (ledger.Usage.Invalid): each was
	// charged its bound (see Bound) in TokensUsed.
	InvalidUsage int64
	ResetAt      time.Time // next midnight in the zone
	// ByUse splits today's spend by what the requests were for (see Use):
	// every request is charged, and this says which ones a ladder caused.
	ByUse map[Use]Spend
}

// Use is what a charged request was for: its traffic kind and whether it was
// planned during a ladder (the ledger's during label). Baseline requests
// during a ladder cost the budget like any other, but are not the service's
// SLI: the split keeps them apart, as the metrics and the ledger do.
type Use struct {
	Traffic ledger.Traffic
	During  string // ledger.Record.DuringLabel(): "none" or "ladder"
}

// Spend is what one Use cost today.
type Spend struct {
	Requests int64 // sent and finished
	Tokens   int64 // server-reported prompt + completion tokens (a request's bound when its usage was impossible)
}

// Budget is one target's daily budget. It is safe for concurrent use.
type Budget struct {
	now func() time.Time

	mu       sync.Mutex
	limits   Limits
	dayStart time.Time
	tokens   int64
	requests int64
	unknown  int64
	invalid  int64
	byUse    map[Use]Spend
	// admitted are the requests admitted and not yet charged, each with
	// its bound in tokens (0: unknown; see Bound).
	admitted map[uint64]int64
}

// New returns a budget with limits, reading time from now (nil = time.Now).
func New(l Limits, now func() time.Time) *Budget {
	if now == nil {
		now = time.Now
	}
	if l.Zone == nil {
		l.Zone = time.UTC
	}
	b := &Budget{now: now, limits: l, admitted: map[uint64]int64{}, byUse: map[Use]Spend{}}
	b.dayStart = startOfDay(now(), l.Zone)
	return b
}

// SetLimits replaces the limits (on reload), keeping today's spend; a new
// zone takes effect from the next reset check.
func (b *Budget) SetLimits(l Limits) {
	if l.Zone == nil {
		l.Zone = time.UTC
	}
	b.mu.Lock()
	b.limits = l
	b.mu.Unlock()
}

// Admit decides at an arrival's planned time whether it may be sent. It
// refuses (ledger.ReasonBudget, false) once today's tokens are spent or
// today's requests, counting those in flight, reach the cap. An admitted
// record is counted in flight until Charge sees it. Admit has the signature
// of dispatch.Admit.
func (b *Budget) Admit(rec *ledger.Record) (ledger.Reason, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rollLocked()
	if b.limits.TokensPerDay > 0 && b.tokens >= b.limits.TokensPerDay {
		return ledger.ReasonBudget, false
	}
	if b.limits.RequestsPerDay > 0 && addSat(b.requests, int64(len(b.admitted))) >= b.limits.RequestsPerDay {
		return ledger.ReasonBudget, false
	}
	b.admitted[rec.ID] = 0
	return "", true
}

// Bound sets the most an admitted request can cost in tokens: its prompt
// estimate + the max tokens it asks for (the daemon sets it when it builds
// the request). It is charged instead of the server's usage when that usage
// cannot be true (ledger.Usage.Invalid), so a server that reports absurd
// counts still spends the budget. A record not in flight is ignored.
func (b *Budget) Bound(id uint64, tokens int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.admitted[id]; ok {
		b.admitted[id] = max(tokens, 0)
	}
}

// Charge accounts a finished record: a sent record costs one request and
// its server-reported prompt + completion tokens; an unsent one costs
// nothing but releases its admission. A sent record whose usage the
// server reported but that cannot be true (ledger.Usage.Invalid) costs its
// bound (see Bound) instead, which Charge returns (0 otherwise) so the
// caller can say so; without a bound it counts as unknown usage. The
// daemon calls it from the target's ledger sink for every finished record.
// Sums saturate: counts near the int64 maximum spend the budget, never
// wrap it around, and a negative count (never believed: see
// ledger.CheckUsage) costs nothing.
func (b *Budget) Charge(rec *ledger.Record) (bound int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rollLocked()
	limit := b.admitted[rec.ID]
	delete(b.admitted, rec.ID)
	if !rec.Sent() {
		return 0
	}
	b.requests = addSat(b.requests, 1)
	u := Use{Traffic: rec.Traffic, During: rec.DuringLabel()}
	sp := b.byUse[u]
	sp.Requests = addSat(sp.Requests, 1)
	switch {
	case rec.Usage.Known:
		tok := addSat(max(int64(rec.Usage.Prompt), 0), max(int64(rec.Usage.Completion), 0))
		b.tokens = addSat(b.tokens, tok)
		sp.Tokens = addSat(sp.Tokens, tok)
	case rec.Usage.Invalid && limit > 0:
		bound = limit
		b.tokens = addSat(b.tokens, bound)
		sp.Tokens = addSat(sp.Tokens, bound)
		b.invalid++
	default:
		b.unknown++
	}
	b.byUse[u] = sp
	return bound
}

// Remaining returns what is left today (for the budget gauge).
func (b *Budget) Remaining() Remaining {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rollLocked()
	r := Remaining{
		TokensLimited:   b.limits.TokensPerDay > 0,
		RequestsLimited: b.limits.RequestsPerDay > 0,
		TokensUsed:      b.tokens,
		RequestsUsed:    b.requests,
		InFlight:        int64(len(b.admitted)),
		UnknownUsage:    b.unknown,
		InvalidUsage:    b.invalid,
		ResetAt:         nextMidnight(b.dayStart, b.limits.Zone),
		ByUse:           make(map[Use]Spend, len(b.byUse)),
	}
	for u, sp := range b.byUse {
		r.ByUse[u] = sp
	}
	if r.TokensLimited {
		r.Tokens = max(0, b.limits.TokensPerDay-b.tokens)
	}
	if r.RequestsLimited {
		r.Requests = max(0, b.limits.RequestsPerDay-addSat(b.requests, r.InFlight))
	}
	return r
}

// addSat adds two non-negative counts, saturating at the int64 maximum.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// rollLocked resets the day's spend when the clock has passed midnight in
// the zone. In-flight admissions carry over and are charged to the new day.
func (b *Budget) rollLocked() {
	d := startOfDay(b.now(), b.limits.Zone)
	if d.Equal(b.dayStart) {
		return
	}
	b.dayStart = d
	b.tokens, b.requests, b.unknown, b.invalid = 0, 0, 0, 0
	clear(b.byUse)
}

// startOfDay is midnight (or the first instant after it, across a DST gap)
// of t's day in loc.
func startOfDay(t time.Time, loc *time.Location) time.Time {
	lt := t.In(loc)
	return time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, loc)
}

func nextMidnight(dayStart time.Time, loc *time.Location) time.Time {
	d := dayStart.In(loc)
	return time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, loc)
}
