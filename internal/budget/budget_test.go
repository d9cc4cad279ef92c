package budget

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func sent(id uint64, prompt, completion int) *ledger.Record {
	return &ledger.Record{ID: id, Dispatched: time.Second, Usage: ledger.Usage{Known: true, Prompt: prompt, Completion: completion}}
}

func TestRequestsBudget(t *testing.T) {
	c := &clock{t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	b := New(Limits{RequestsPerDay: 3}, c.now)
	var ids []uint64
	for i := uint64(1); i <= 5; i++ {
		reason, ok := b.Admit(&ledger.Record{ID: i})
		if ok {
			ids = append(ids, i)
		} else if reason != ledger.ReasonBudget {
			t.Fatalf("refusal reason %q, want budget", reason)
		}
	}
	if len(ids) != 3 {
		t.Fatalf("admitted %d of 5 with a budget of 3 (in-flight must count)", len(ids))
	}
	if err := ledger.Check(ledger.Unsent, ledger.ReasonBudget); err != nil {
		t.Fatal(err)
	}
	// One admitted arrival ends unsent (e.g. client cap): it releases its slot.
	b.Charge(&ledger.Record{ID: ids[0]})
	if _, ok := b.Admit(&ledger.Record{ID: 6}); !ok {
		t.Fatal("an unsent admission did not release its request")
	}
	if r := b.Remaining(); r.Requests != 0 || r.InFlight != 3 || !r.RequestsLimited {
		t.Fatalf("remaining %+v", r)
	}
}

func TestTokensBudgetAndReset(t *testing.T) {
	zone, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	c := &clock{t: time.Date(2026, 3, 7, 23, 0, 0, 0, zone)}
	b := New(Limits{TokensPerDay: 100, Zone: zone}, c.now)
	if _, ok := b.Admit(&ledger.Record{ID: 1}); !ok {
		t.Fatal("fresh budget refused")
	}
	b.Charge(sent(1, 30, 50))
	if r := b.Remaining(); r.Tokens != 20 || r.TokensUsed != 80 || r.RequestsUsed != 1 {
		t.Fatalf("after 80 tokens: %+v", r)
	}
	b.Admit(&ledger.Record{ID: 2})
	b.Charge(sent(2, 10, 20)) // overshoot by an in-flight request is allowed
	if reason, ok := b.Admit(&ledger.Record{ID: 3}); ok || reason != ledger.ReasonBudget {
		t.Fatalf("spent budget admitted: %q %v", reason, ok)
	}
	if r := b.Remaining(); r.Tokens != 0 {
		t.Fatalf("remaining tokens below zero: %+v", r)
	}
	// Unknown usage counts a request but no tokens.
	b.Charge(&ledger.Record{ID: 9, Dispatched: 1})
	if r := b.Remaining(); r.UnknownUsage != 1 || r.TokensUsed != 110 {
		t.Fatalf("unknown usage: %+v", r)
	}
	// Midnight New York (the night before the DST change) resets.
	wantReset := time.Date(2026, 3, 8, 0, 0, 0, 0, zone)
	if r := b.Remaining(); !r.ResetAt.Equal(wantReset) {
		t.Fatalf("reset at %v, want %v", r.ResetAt, wantReset)
	}
	c.set(wantReset.Add(-time.Nanosecond))
	if _, ok := b.Admit(&ledger.Record{ID: 4}); ok {
		t.Fatal("admitted before midnight")
	}
	c.set(wantReset)
	if _, ok := b.Admit(&ledger.Record{ID: 5}); !ok {
		t.Fatal("not reset at midnight")
	}
	// The next reset is 23 hours later (spring forward).
	if r := b.Remaining(); r.ResetAt.Sub(wantReset) != 23*time.Hour || r.TokensUsed != 0 {
		t.Fatalf("after reset: %+v (next in %v)", r, r.ResetAt.Sub(wantReset))
	}
}

// TestTokenSumsSaturate (issue 8, defect 5): usage counts near the int64
// maximum spend the budget instead of overflowing it: the first such
// request ends admission, the remaining-tokens figure never exceeds the
// limit, and a negative count refunds nothing.
func TestTokenSumsSaturate(t *testing.T) {
	c := &clock{t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	b := New(Limits{TokensPerDay: 1000}, c.now)
	admitted := 0
	for i := uint64(1); i <= 25; i++ {
		rec := sent(i, math.MaxInt, math.MaxInt)
		if _, ok := b.Admit(rec); !ok {
			continue
		}
		admitted++
		b.Charge(rec)
		if rem := b.Remaining(); rem.Tokens < 0 || rem.Tokens > 1000 || rem.TokensUsed < 0 {
			t.Fatalf("after request %d: remaining %d, used %d", i, rem.Tokens, rem.TokensUsed)
		}
	}
	if admitted != 1 {
		t.Errorf("admitted %d requests after a request reported int64-max tokens, want 1", admitted)
	}
	if rem := b.Remaining(); rem.Tokens != 0 || rem.TokensUsed != math.MaxInt64 {
		t.Errorf("remaining %d, used %d: want 0 and the saturated maximum", rem.Tokens, rem.TokensUsed)
	}

	n := New(Limits{TokensPerDay: 1000}, c.now)
	n.Charge(sent(1, 900, 0))
	n.Charge(sent(2, -800, -5))
	if rem := n.Remaining(); rem.Tokens != 100 {
		t.Errorf("remaining %d after a negative report, want 100 (a negative count refunds nothing)", rem.Tokens)
	}
}

func TestUnlimited(t *testing.T) {
	b := New(Limits{}, nil)
	for i := uint64(1); i <= 1000; i++ {
		if _, ok := b.Admit(&ledger.Record{ID: i}); !ok {
			t.Fatal("unlimited budget refused")
		}
		b.Charge(sent(i, 1000, 1000))
	}
	if r := b.Remaining(); r.TokensLimited || r.RequestsLimited || r.RequestsUsed != 1000 {
		t.Fatalf("%+v", r)
	}
}

func TestConcurrentAdmit(t *testing.T) {
	b := New(Limits{RequestsPerDay: 50}, nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if _, ok := b.Admit(&ledger.Record{ID: uint64(g*1000 + i)}); ok {
					mu.Lock()
					admitted++
					mu.Unlock()
				}
			}
		}(g)
	}
	wg.Wait()
	if admitted != 50 {
		t.Fatalf("admitted %d, want exactly 50", admitted)
	}
}

func BenchmarkAdmitCharge(b *testing.B) {
	bud := New(Limits{TokensPerDay: 1 << 60, RequestsPerDay: 1 << 60}, nil)
	rec := &ledger.Record{Dispatched: 1, Usage: ledger.Usage{Known: true, Prompt: 10, Completion: 10}}
	for i := 0; b.Loop(); i++ {
		rec.ID = uint64(i)
		bud.Admit(rec)
		bud.Charge(rec)
	}
}

// TestSpendByUse: every sent request is charged, and the split says which
// were ladder requests, baseline requests during a ladder and plain
// baseline requests; the split resets with the day.
func TestSpendByUse(t *testing.T) {
	c := &clock{t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	b := New(Limits{RequestsPerDay: 100}, c.now)
	recs := []*ledger.Record{
		{Traffic: ledger.TrafficBaseline, Usage: ledger.Usage{Known: true, Prompt: 10, Completion: 5}},
		{Traffic: ledger.TrafficBaseline, During: ledger.DuringLadder, Usage: ledger.Usage{Known: true, Prompt: 10, Completion: 20}},
		{Traffic: ledger.TrafficLadder, During: ledger.DuringLadder, Usage: ledger.Usage{Known: true, Prompt: 1, Completion: 2}},
		{Traffic: ledger.TrafficLadder, Usage: ledger.Usage{Known: true, Prompt: 1, Completion: 2}}, // ladder traffic is always during a ladder
		{Traffic: ledger.TrafficBaseline, During: ledger.DuringLadder},                              // unsent: costs nothing
	}
	for i, r := range recs {
		r.ID = uint64(i + 1)
		if i < 4 {
			r.Dispatched = time.Second
		}
		if _, ok := b.Admit(r); !ok {
			t.Fatal("refused")
		}
		b.Charge(r)
	}
	rem := b.Remaining()
	want := map[Use]Spend{
		{ledger.TrafficBaseline, "none"}:   {Requests: 1, Tokens: 15},
		{ledger.TrafficBaseline, "ladder"}: {Requests: 1, Tokens: 30},
		{ledger.TrafficLadder, "ladder"}:   {Requests: 2, Tokens: 6},
	}
	if len(rem.ByUse) != len(want) {
		t.Fatalf("by use %v, want %v", rem.ByUse, want)
	}
	total := Spend{}
	for u, w := range want {
		if rem.ByUse[u] != w {
			t.Errorf("%v: %+v, want %+v", u, rem.ByUse[u], w)
		}
		total.Requests += rem.ByUse[u].Requests
		total.Tokens += rem.ByUse[u].Tokens
	}
	if total.Requests != rem.RequestsUsed || total.Tokens != rem.TokensUsed {
		t.Errorf("split %+v does not add up to the totals (%d requests, %d tokens)", total, rem.RequestsUsed, rem.TokensUsed)
	}
	c.set(c.now().Add(24 * time.Hour))
	if rem := b.Remaining(); len(rem.ByUse) != 0 {
		t.Errorf("split after midnight: %v, want empty", rem.ByUse)
	}
}

// TestInvalidUsageChargesBound: a response whose usage was refused as
// impossible (9.2e18 tokens: ledger.CheckUsage flags it Invalid, counts
// unknown) is charged the most the request could have cost, its prompt
// estimate + the max tokens it asked for (set by Bound when it was built),
// so a server reporting nonsense cannot spend nothing; without a bound the
// request counts as unknown usage, as one without usage does.
func TestInvalidUsageChargesBound(t *testing.T) {
	c := &clock{t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	b := New(Limits{TokensPerDay: 100}, c.now)
	refused := func(id uint64) *ledger.Record {
		return &ledger.Record{ID: id, Dispatched: time.Second, Usage: ledger.CheckUsage(math.MaxInt64, math.MaxInt64, 0)}
	}
	for _, tc := range []struct {
		id           uint64
		bound        int64 // 0: none set
		wantCharged  int64
		wantUsed     int64
		wantInvalid  int64
		wantUnknown  int64
		wantAdmitted bool
	}{
		{1, 16 + 8, 24, 24, 1, 0, true},    // prompt estimate 16 + max_tokens 8
		{2, 0, 0, 24, 1, 1, true},          // no bound known: unknown usage, as before
		{3, 50 + 64, 114, 138, 2, 1, true}, // spends the budget
		{4, 10, 0, 138, 2, 1, false},       // refused at admission: nothing to charge
	} {
		_, ok := b.Admit(&ledger.Record{ID: tc.id})
		if ok != tc.wantAdmitted {
			t.Fatalf("record %d: admitted %v, want %v", tc.id, ok, tc.wantAdmitted)
		}
		if !ok {
			continue
		}
		if tc.bound > 0 {
			b.Bound(tc.id, tc.bound)
		}
		if got := b.Charge(refused(tc.id)); got != tc.wantCharged {
			t.Errorf("record %d: charged its bound %d, want %d", tc.id, got, tc.wantCharged)
		}
		r := b.Remaining()
		if r.TokensUsed != tc.wantUsed || r.InvalidUsage != tc.wantInvalid || r.UnknownUsage != tc.wantUnknown || r.InFlight != 0 {
			t.Errorf("record %d: used %d invalid %d unknown %d in flight %d; want %d %d %d 0", tc.id, r.TokensUsed, r.InvalidUsage, r.UnknownUsage, r.InFlight,
				tc.wantUsed, tc.wantInvalid, tc.wantUnknown)
		}
	}
	// A believable usage is charged as reported, whatever the bound.
	c.set(c.now().Add(24 * time.Hour))
	b.Admit(&ledger.Record{ID: 5})
	b.Bound(5, 1000)
	if got := b.Charge(sent(5, 3, 4)); got != 0 || b.Remaining().TokensUsed != 7 {
		t.Errorf("believable usage: bound charged %d, tokens used %d; want 0 and 7", got, b.Remaining().TokensUsed)
	}
	// Bound for a record never admitted (or already charged) is ignored.
	b.Bound(99, 5)
	if r := b.Remaining(); r.InFlight != 0 {
		t.Errorf("Bound admitted record 99: in flight %d", r.InFlight)
	}
}
