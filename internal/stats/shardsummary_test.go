package stats

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// randomCohort is n records of a step: mostly ok with random latencies,
// some rejected, timed out and unsent at the in-flight cap.
func randomCohort(seed uint64, n int) []ledger.Record {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]ledger.Record, 0, n)
	for i := range n {
		p := time.Duration(i) * 10 * ms
		switch x := rng.IntN(20); {
		case x == 0:
			out = append(out, failRec(p, ms, 40*ms, ledger.Rejected, ledger.ReasonStatus429))
		case x == 1:
			out = append(out, failRec(p, 2*ms, 900*ms, ledger.Timeout, ledger.ReasonFirstContent))
		case x == 2:
			out = append(out, failRec(p, 0, 0, ledger.Unsent, ledger.ReasonClientCap))
		default:
			ttft := time.Duration(20+rng.IntN(400)) * ms
			out = append(out, okRec(p, time.Duration(rng.IntN(3000))*time.Microsecond, ttft, ttft+time.Duration(rng.IntN(800))*ms, 8))
		}
	}
	return out
}

// TestMergeEqualsOneAccumulator: three shards' cohorts, each summarised by
// its own accumulator and sent as JSON ShardSummaries, merge into exactly the
// Summary one accumulator makes of all their records: counts, exact
// percentiles and the validity verdict (same rate, same window).
func TestMergeEqualsOneAccumulator(t *testing.T) {
	cfg := Config{Mode: ledger.ModeOpen, RequestedRate: 300, Window: 10 * time.Second,
		Gates: Gates{TTFT: 300 * ms}, Validity: verdict.ValidityConfig{MaxLagP99: 2 * ms}}
	whole := NewAccumulator(cfg)
	var parts []ShardSummary
	for shard := range 3 {
		share := cfg
		share.RequestedRate = cfg.RequestedRate / 3
		a := NewAccumulator(share)
		for _, r := range randomCohort(uint64(shard), 1000) {
			a.Add(&r)
			whole.Add(&r)
		}
		b, err := json.Marshal(a.ShardSummary(true))
		if err != nil {
			t.Fatal(err)
		}
		var p ShardSummary
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	got, err := Merge(cfg, parts)
	if err != nil {
		t.Fatal(err)
	}
	want := whole.Summary()
	if got.Planned != want.Planned || got.Dispatched != want.Dispatched || got.Unsent != want.Unsent || got.Good != want.Good ||
		got.Rejected != want.Rejected || got.Completed != want.Completed || got.GateMisses != want.GateMisses {
		t.Fatalf("counts: got %+v\nwant %+v", got, want)
	}
	if got.TTFT != want.TTFT || got.E2E != want.E2E || got.DispatchLag != want.DispatchLag {
		t.Fatalf("percentiles: got ttft %+v e2e %+v lag %+v\nwant ttft %+v e2e %+v lag %+v", got.TTFT, got.E2E, got.DispatchLag, want.TTFT, want.E2E, want.DispatchLag)
	}
	if !got.TTFT.Exact || got.TTFT.Count < 2000 {
		t.Fatalf("TTFT merged from exact samples: %+v", got.TTFT)
	}
	if got.GoodFraction != want.GoodFraction || got.AchievedRate != want.AchievedRate || got.GoodputPerSecond != want.GoodputPerSecond {
		t.Fatalf("derived: got %g %g %g, want %g %g %g", got.GoodFraction, got.AchievedRate, got.GoodputPerSecond, want.GoodFraction, want.AchievedRate, want.GoodputPerSecond)
	}
	if got.Validity.Valid != want.Validity.Valid || strings.Join(got.Validity.Reasons(), "|") != strings.Join(want.Validity.Reasons(), "|") {
		t.Fatalf("validity: got %+v, want %+v", got.Validity, want.Validity)
	}
	if got.Validity.Valid || !got.Validity.Has(cause.InFlightCap) {
		t.Fatalf("the cohort had client_cap arrivals: want in_flight_cap, got %+v", got.Validity)
	}
}

// TestSketchBucketedAboveExportExact: a distribution past ExportExact
// samples travels as buckets; merging it keeps quantiles within the
// histogram's stated error and the count, minimum and maximum exact.
func TestSketchBucketedAboveExportExact(t *testing.T) {
	d, whole := quantile.NewDist(0), quantile.NewDist(0)
	rng := rand.New(rand.NewPCG(1, 2))
	for range quantile.ExportExact + 10 {
		v := time.Duration(1+rng.IntN(5000)) * time.Microsecond
		d.Add(v)
		whole.Add(v)
	}
	sk := d.Sketch(0)
	if len(sk.Exact) != 0 || len(sk.Buckets) == 0 {
		t.Fatalf("want buckets past %d samples, got %d exact, %d buckets", quantile.ExportExact, len(sk.Exact), len(sk.Buckets))
	}
	m := quantile.NewDist(0)
	if err := m.Merge(sk); err != nil {
		t.Fatal(err)
	}
	got, want := m.Percentiles(), whole.Percentiles()
	if got.Count != want.Count || got.Max != want.Max || got.Exact {
		t.Fatalf("got %+v, want count and max of %+v, inexact", got, want)
	}
	for _, q := range []struct{ g, w time.Duration }{{got.P50, want.P50}, {got.P95, want.P95}, {got.P99, want.P99}} {
		if rel := float64(q.g-q.w) / float64(q.w); rel > quantile.HistogramRelativeError+1e-9 || rel < -quantile.HistogramRelativeError-1e-9 {
			t.Errorf("quantile %v vs exact %v: relative error %g above %g", q.g, q.w, rel, quantile.HistogramRelativeError)
		}
	}
}

// TestPartCheckRefusesHostile: a ShardSummary or Sketch whose counts cannot be
// true is refused with what is wrong, never merged.
func TestPartCheckRefusesHostile(t *testing.T) {
	good := func() ShardSummary {
		a := NewAccumulator(Config{Window: time.Second})
		for _, r := range randomCohort(3, 40) {
			a.Add(&r)
		}
		return a.ShardSummary(true)
	}
	if err := good().Check(); err != nil {
		t.Fatalf("a real part: %v", err)
	}
	tests := []struct {
		name string
		mod  func(*ShardSummary)
		want string
	}{
		{"negative count", func(p *ShardSummary) { p.Good = -1 }, "negative"},
		{"identity broken", func(p *ShardSummary) { p.Dispatched++ }, "dispatched"},
		{"unknown outcome", func(p *ShardSummary) { p.Outcomes["exploded"] = map[ledger.Reason]int{"": 1} }, "unknown outcome"},
		{"outcomes do not add up", func(p *ShardSummary) { p.Outcomes[ledger.OK][ledger.ReasonStop]++ }, "add up"},
		{"more samples than ok", func(p *ShardSummary) {
			p.TTFT.Exact = append(p.TTFT.Exact, p.TTFT.Max)
			p.TTFT.Count++
			p.Completed, p.Good = 0, 0
		}, "samples for"},
		{"samples unsorted", func(p *ShardSummary) { p.E2E.Exact[1], p.E2E.Exact[2] = p.E2E.Exact[2]+1, p.E2E.Exact[1] }, "order"},
		{"bucket out of range", func(p *ShardSummary) {
			p.TTFT = quantile.Sketch{Count: 1, Min: 1, Max: 1, Buckets: map[int]int{5001: 1}} // past quantile's largest bucket index, 5000
		}, "bucket"},
		{"no lag limit", func(p *ShardSummary) { p.LagLimitNS = 0 }, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := good()
			tt.mod(&p)
			err := p.Check()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
			if _, err := Merge(Config{Window: time.Second}, []ShardSummary{p}); err == nil {
				t.Fatal("Merge took a part Check refuses")
			}
		})
	}
}

// TestFleetValidity: a missing shard or an invalid shard makes the step
// invalid with the fleet cause and the shard named; otherwise the merged
// cohort's verdict stands.
func TestFleetValidity(t *testing.T) {
	merged := verdict.Validity{Valid: true, Notes: []string{"n"}}
	if v := verdict.FleetValidity(merged, []verdict.ShardVerdict{{Shard: 0, Validity: verdict.Validity{Valid: true}}, {Shard: 1, Validity: verdict.Validity{Valid: true}}}); !v.Valid {
		t.Fatalf("all valid: %+v", v)
	}
	lag := verdict.Validity{Valid: false,
		Causes: []verdict.InvalidCause{{Cause: cause.DispatchLag, Reason: "dispatch-lag p99 30ms exceeds 10ms"}}}
	v := verdict.FleetValidity(merged, []verdict.ShardVerdict{{Shard: 0, Validity: verdict.Validity{Valid: true}}, {Shard: 1, Validity: lag}, {Shard: 2, Missing: "connection refused"}})
	if v.Valid || !v.Has(cause.ShardInvalid) || !v.Has(cause.ShardMissing) || len(v.Causes) != 2 {
		t.Fatalf("got %+v", v)
	}
	if !strings.Contains(v.Reasons()[0], "shard 1: generator invalid (dispatch_lag): dispatch-lag p99 30ms") ||
		!strings.Contains(v.Reasons()[1], "shard 2: no results: connection refused") || v.Causes[1].Action == "" {
		t.Fatalf("reasons %q", v.Reasons())
	}
}

// TestWindowCutAndPending: a cohort whose arrivals stopped early is judged
// over the time they ran (SetWindow: rates and the generator's expected
// arrivals), its pending requests are offered, planned and not good
// (SetPending), and both travel through a ShardSummary into Merge: shards stopped
// early together merge into the window they ran.
func TestWindowCutAndPending(t *testing.T) {
	cfg := Config{Mode: ledger.ModeOpen, RequestedRate: 100, Window: 20 * time.Second, Gates: Gates{TTFT: time.Second}}
	// 100 req/s for 1 s, then stopped: 80 finished ok, 20 still in flight.
	a := NewAccumulator(cfg)
	for i := range 80 {
		r := okRec(time.Duration(i)*10*ms, ms, 50*ms, 60*ms, 4)
		a.Add(&r)
	}
	full := a.Summary()
	if full.Validity.Valid || !full.Validity.Has(cause.RateNotReached) {
		t.Fatalf("over the full 20 s, 80 arrivals of 2000 expected: want rate_not_reached, got %+v", full.Validity)
	}
	a.SetWindow(time.Second)
	a.SetWindow(5 * time.Second) // never lengthens
	a.SetPending(20)
	s := a.Summary()
	if s.Window != time.Second || s.WindowAsked != 20*time.Second {
		t.Fatalf("window %s asked %s, want 1s of 20s", s.Window, s.WindowAsked)
	}
	if !s.Validity.Valid {
		t.Fatalf("80 dispatched + 20 in flight in 1 s at 100 req/s: want valid, got %v", s.Validity.Reasons())
	}
	if s.AchievedRate != 100 || s.GoodputPerSecond != 80 || s.GoodFraction != 0.8 || s.Pending != 20 {
		t.Fatalf("achieved %g goodput %g good fraction %g pending %d: want 100, 80, 0.8, 20", s.AchievedRate, s.GoodputPerSecond, s.GoodFraction, s.Pending)
	}
	// A cut of 0 (stopped before the schedule began) is 1 ms, not 0 (which
	// would disable every rate).
	z := NewAccumulator(cfg)
	z.SetWindow(0)
	if w := z.Summary().Window; w != time.Millisecond {
		t.Fatalf("window cut to 0: %s, want 1ms", w)
	}

	// Two shards at 50 req/s each, stopped at 1 s and 1.2 s, merge into the
	// mean window 1.1 s; a shard's pending requests stay planned and not good.
	share := cfg
	share.RequestedRate = 50
	var parts []ShardSummary
	for i, w := range []time.Duration{time.Second, 1200 * ms} {
		b := NewAccumulator(share)
		for j := range 50 {
			r := okRec(time.Duration(j)*20*ms, ms, 50*ms, 60*ms, 4)
			b.Add(&r)
		}
		b.SetWindow(w)
		b.SetPending(i * 5)
		j, err := json.Marshal(b.ShardSummary(true))
		if err != nil {
			t.Fatal(err)
		}
		var p ShardSummary
		if err := json.Unmarshal(j, &p); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	m, err := Merge(cfg, parts)
	if err != nil {
		t.Fatal(err)
	}
	if m.Window != 1100*ms || m.WindowAsked != cfg.Window || m.Pending != 5 || m.GoodFraction != 100.0/105 || !m.Validity.Valid {
		t.Fatalf("merged window %s (asked %s), pending %d, good fraction %g, valid %v: want 1.1s (20s), 5, 100/105, valid",
			m.Window, m.WindowAsked, m.Pending, m.GoodFraction, m.Validity.Valid)
	}
	// A part claiming a window longer than the cohort's is refused.
	bad := parts[0]
	bad.WindowNS = int64(21 * time.Second)
	if _, err := Merge(cfg, []ShardSummary{bad}); err == nil || !strings.Contains(err.Error(), "window") {
		t.Fatalf("a 21 s part in a 20 s cohort: err %v", err)
	}
	bad = parts[0]
	bad.Pending = -1
	if err := bad.Check(); err == nil {
		t.Fatal("a negative pending count passed Check")
	}
}
