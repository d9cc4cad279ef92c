package verdict

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ledger"
)

// exactTail is P(X ≥ k), X ~ Binomial(n, num/100), in exact integer
// arithmetic (Σ C(n,j)·num^j·(100−num)^(n−j) / 100^n): the oracle
// BinomialTail is held to.
func exactTail(n, k int, num int64) float64 {
	sum := new(big.Int)
	a, b := big.NewInt(num), big.NewInt(100-num)
	for j := k; j <= n; j++ {
		t := new(big.Int).Binomial(int64(n), int64(j))
		t.Mul(t, new(big.Int).Exp(a, big.NewInt(int64(j)), nil))
		t.Mul(t, new(big.Int).Exp(b, big.NewInt(int64(n-j)), nil))
		sum.Add(sum, t)
	}
	f, _ := new(big.Rat).SetFrac(sum, new(big.Int).Exp(big.NewInt(100), big.NewInt(int64(n)), nil)).Float64()
	return f
}

// TestBinomialTailKnown: known tail probabilities (exact rational sums,
// checked with Python's fractions) and the edges.
func TestBinomialTailKnown(t *testing.T) {
	for _, tc := range []struct {
		n, k int
		p    float64
		want float64
	}{
		{14, 1, 0.01, 0.1312541872310217}, // 1 − 0.99^14
		{14, 2, 0.01, 0.008401244011166174},
		{300, 12, 0.01, 6.292191267817833e-05},
		{300, 3, 0.01, 0.5779360824602557},
		{300, 8, 0.01, 0.011474078634877689},
		{1000, 20, 0.01, 0.0032883597877274664},
		{100, 5, 0.01, 0.003432321587754515},
		{10, 5, 0.5, 0.623046875}, // 638/1024
		{5, 0, 0.3, 1},
		{5, 6, 0.3, 0},
		{5, 5, 0.5, 1.0 / 32},
		{7, 1, 0, 0},
		{7, 7, 1, 1},
	} {
		if got := BinomialTail(tc.n, tc.k, tc.p); math.Abs(got-tc.want) > 1e-12*math.Max(tc.want, 1e-300) && math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("P(X ≥ %d | n=%d, p=%g) = %.16g, want %.16g", tc.k, tc.n, tc.p, got, tc.want)
		}
	}
}

// TestBinomialTailExact: against exact rational sums over random n, k, p,
// both sides of the mean, to a relative 1e-10.
func TestBinomialTailExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for range 300 {
		n := 1 + rng.IntN(400)
		k := rng.IntN(n + 2)
		num := int64(1 + rng.IntN(99))
		want := exactTail(n, k, num)
		got := BinomialTail(n, k, float64(num)/100)
		if want < 1e-250 {
			continue // below float64's comfortable range
		}
		if math.Abs(got-want) > 1e-10*want {
			t.Fatalf("P(X ≥ %d | n=%d, p=%d/100) = %.16g, want %.16g", k, n, num, got, want)
		}
	}
	// Large n: the tail at the mean is about a half, and monotone in k.
	prev := 1.0
	for k := 9990; k <= 10100; k += 10 {
		got := BinomialTail(1_000_000, k, 0.01)
		if got > prev || got <= 0 {
			t.Fatalf("n=1e6 k=%d: %g after %g: not a falling tail", k, got, prev)
		}
		prev = got
	}
	if mid := BinomialTail(1_000_000, 10_000, 0.01); math.Abs(mid-0.5) > 0.01 {
		t.Errorf("n=1e6, k=np: tail %g, want ≈0.5", mid)
	}
}

// TestLagRuleExamples: the worked examples of docs/figures.md. One late
// dispatch of 14 is no evidence (P = 0.13), 12 of 300 is (P ≈ 6.3e-5), a
// dispatch beyond 10 × the limit invalidates alone; the reason states the
// figures.
func TestLagRuleExamples(t *testing.T) {
	for _, tc := range []struct {
		name            string
		e               Evidence
		valid           bool
		reason          string
		wantSignificant bool
	}{
		{"1 of 14 late", Evidence{LagCount: 14, LagOver: 1, LagP99: 18 * ms, LagMax: 18 * ms}, true, "", false},
		{"2 of 14 late", Evidence{LagCount: 14, LagOver: 2, LagP99: 18 * ms}, true, "", false},
		{"3 of 14 late", Evidence{LagCount: 14, LagOver: 3, LagP99: 18 * ms}, false, "3 of 14 dispatches later than 10ms (21.4 %, significantly above 1 % at 99.9 % confidence: P = 0.00034)", true},
		{"12 of 300 late", Evidence{LagCount: 300, LagOver: 12, LagP99: 18200 * time.Microsecond}, false,
			"12 of 300 dispatches later than 10ms (4.0 %, significantly above 1 % at 99.9 % confidence: P = 6.3e-05); p99 18.2ms", true},
		{"10 of 300 late", Evidence{LagCount: 300, LagOver: 10, LagP99: 12 * ms}, true, "", false},
		{"hard guard", Evidence{LagCount: 300, LagOver: 1, LagOverHard: 1, LagP99: 2 * ms, LagMax: 230 * ms}, false,
			"1 of 300 dispatches later than 100ms (10 × the 10ms limit, the latest 230ms: one that late invalidates on its own); p99 2ms", false},
		{"just under the hard guard", Evidence{LagCount: 300, LagOver: 1, LagP99: 2 * ms, LagMax: 99 * ms}, true, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.e.Mode = ledger.ModeClosed // the rate is not judged
			v := ValidityConfig{}.Judge(tc.e)
			if v.Valid != tc.valid {
				t.Fatalf("valid %v, want %v: %v", v.Valid, tc.valid, v.Reasons())
			}
			if !tc.valid && (!v.Has(cause.DispatchLag) || !strings.Contains(v.Reasons()[0], tc.reason)) {
				t.Errorf("reason %q, want it to contain %q", v.Reasons(), tc.reason)
			}
			if sig, _ := LagSignificant(tc.e.LagCount, tc.e.LagOver, DefaultLagConfidence); sig != tc.wantSignificant {
				t.Errorf("significant %v, want %v", sig, tc.wantSignificant)
			}
		})
	}
	// A looser confidence decides on less: 2 of 14 (P = 0.0084) is
	// significant at 99 %, and the hard factor is configurable.
	cfg := ValidityConfig{LagConfidence: 0.99, LagHardFactor: 3}
	if v := cfg.Judge(Evidence{Mode: ledger.ModeClosed, LagCount: 14, LagOver: 2}); v.Valid || !strings.Contains(v.Reasons()[0], "at 99 % confidence") {
		t.Errorf("2 of 14 at 99 %%: %v", v.Reasons())
	}
	if cfg.HardLimit() != 30*ms || (ValidityConfig{}).HardLimit() != 100*ms {
		t.Errorf("hard limits %v and %v, want 30ms and 100ms", cfg.HardLimit(), ValidityConfig{}.HardLimit())
	}
}

const ms = time.Millisecond
