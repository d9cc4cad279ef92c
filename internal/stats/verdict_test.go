package stats

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestLagRuleAccumulatorAndMerge: a cohort counts the dispatches beyond the
// hard limit, and parts carry the counts so a merged step reaches the
// verdict one cohort of all the records would; parts counted against
// another hard limit do not merge.
func TestLagRuleAccumulatorAndMerge(t *testing.T) {
	cfg := Config{Mode: ledger.ModeOpen, RequestedRate: 10, Window: 10 * time.Second}
	var recs []ledger.Record
	for i := range 100 {
		lag := ms
		if i == 50 {
			lag = 150 * ms // beyond 10 × 10ms
		}
		recs = append(recs, okRec(time.Duration(i)*100*ms, lag, 10*ms, 20*ms, 2))
	}
	one := Summarize(cfg, recs)
	if one.Validity.Valid || !strings.Contains(one.Validity.Reasons()[0], "the latest 150ms") {
		t.Fatalf("one dispatch 150ms late: %v", one.Validity.Reasons())
	}
	a, b := NewAccumulator(cfg), NewAccumulator(cfg)
	for i := range recs {
		if i%2 == 0 {
			a.Add(&recs[i])
		} else {
			b.Add(&recs[i])
		}
	}
	for _, samples := range []bool{true, false} {
		pa, pb := a.ShardSummary(samples), b.ShardSummary(samples)
		if pa.LagOverHard+pb.LagOverHard != 1 || pa.LagHardNS != int64(100*ms) {
			t.Fatalf("parts count %d+%d beyond %v", pa.LagOverHard, pb.LagOverHard, time.Duration(pa.LagHardNS))
		}
		m, err := Merge(cfg, []ShardSummary{pa, pb})
		if err != nil {
			t.Fatal(err)
		}
		if m.Validity.Valid || !m.Validity.Has(cause.DispatchLag) || !strings.Contains(m.Validity.Reasons()[0], "1 of 100 dispatches later than 100ms") {
			t.Errorf("merged (samples %v): %v", samples, m.Validity.Reasons())
		}
	}
	other := cfg
	other.Validity.LagHardFactor = 20
	if _, err := Merge(other, []ShardSummary{a.ShardSummary(false)}); err == nil || !strings.Contains(err.Error(), "hard") {
		t.Errorf("a part counted against another hard limit merged: %v", err)
	}
	bad := a.ShardSummary(false)
	bad.LagOverHard = bad.LagOver + 1
	if err := bad.Check(); err == nil {
		t.Error("more dispatches beyond the hard limit than beyond the limit passed the check")
	}
}

// TestLiveMatchesCohortVerdict: fed the same dispatches, the live window
// and a cohort's Accumulator reach the same lag verdict (one rule).
func TestLiveMatchesCohortVerdict(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Unix(4_000_000, 0)
	for trial := range 200 {
		n := 1 + rng.IntN(500)
		late := rng.IntN(12)
		live := verdict.NewLiveValidity(time.Minute, verdict.ValidityConfig{})
		acc := NewAccumulator(Config{})
		for i := range n {
			lag := time.Duration(rng.IntN(9000)) * time.Microsecond
			if i < late {
				lag = 10*ms + time.Duration(1+rng.IntN(20000))*time.Microsecond
			}
			r := okRec(time.Duration(i)*ms, lag, 10*ms, 20*ms, 2)
			live.Record(now, &r)
			acc.Add(&r)
		}
		lv, cv := live.Judge(now, verdict.HostHealth{}), acc.Summary().Validity
		if lv.Valid != cv.Valid || lv.Has(cause.DispatchLag) != cv.Has(cause.DispatchLag) {
			t.Fatalf("trial %d (n %d, late %d): live %v %v, cohort %v %v", trial, n, late, lv.Valid, lv.Reasons(), cv.Valid, cv.Reasons())
		}
	}
}
