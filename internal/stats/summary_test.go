package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

const ms = time.Millisecond

// okRec is an ok record planned at p with the given TTFT, e2e, gaps and
// completion tokens (0: no usage).
func okRec(p, lag, ttft, e2e time.Duration, tokens int, gaps ...time.Duration) ledger.Record {
	r := ledger.Record{
		Mode: ledger.ModeOpen, Planned: p, Dispatched: p + lag, Headers: p + lag + ms,
		FirstContent: p + ttft, LastContent: p + e2e - ms, End: p + e2e, ChunkGaps: gaps,
		Outcome: ledger.OK, Reason: ledger.ReasonStop, ContentEvents: len(gaps) + 1,
	}
	if tokens > 0 {
		r.Usage = ledger.Usage{Known: true, Completion: tokens}
	}
	return r
}

func failRec(p, lag, end time.Duration, o ledger.Outcome, reason ledger.Reason) ledger.Record {
	r := ledger.Record{Mode: ledger.ModeOpen, Planned: p, Outcome: o, Reason: reason}
	if o != ledger.Unsent {
		r.Dispatched = p + lag
		r.End = p + end
	}
	return r
}

func TestSummaryCountsAndFigures(t *testing.T) {
	recs := []ledger.Record{
		okRec(0, 1*ms, 100*ms, 1000*ms, 11, 10*ms, 20*ms), // tpot = (999-100)/10
		okRec(100*ms, 2*ms, 200*ms, 2000*ms, 0, 30*ms),    // no usage
		okRec(200*ms, 3*ms, 300*ms, 3000*ms, 1),           // one token: no tpot
		failRec(300*ms, 4*ms, 50*ms, ledger.Rejected, ledger.ReasonStatus429),
		failRec(400*ms, 5*ms, 60*ms, ledger.Rejected, ledger.ReasonStatus503),
		failRec(500*ms, 0, 0, ledger.Unsent, ledger.ReasonClientCap),
		failRec(600*ms, 6*ms, 9000*ms, ledger.Censored, ledger.ReasonDrainDeadline),
		failRec(700*ms, 7*ms, 500*ms, ledger.Timeout, ledger.ReasonFirstContent),
		failRec(800*ms, 8*ms, 40*ms, ledger.Cancelled, ledger.ReasonInjected),
		failRec(20*time.Second, 1*ms, 10*ms, ledger.OK, ledger.ReasonStop), // outside the window
	}
	recs[0].FirstReasoning = 50 * ms
	s := Summarize(Config{RequestedRate: 1, Window: 10 * time.Second}, recs)

	ints := []struct {
		name      string
		got, want int
	}{
		{"planned", s.Planned, 9},
		{"outside", s.OutsideWindow, 1},
		{"dispatched", s.Dispatched, 8},
		{"unsent", s.Unsent, 1},
		{"rejected", s.Rejected, 2},
		{"admitted", s.Admitted, 6},
		{"completed", s.Completed, 3},
		{"censored", s.Censored, 1},
		{"cancelled", s.Cancelled, 1},
		{"injected cancels", s.InjectedCancels, 1},
		{"ok count", s.Outcomes.ByOutcome[ledger.OK], 3},
		{"429", s.Outcomes.ByReason[ledger.Rejected][ledger.ReasonStatus429], 1},
		{"503", s.Outcomes.ByReason[ledger.Rejected][ledger.ReasonStatus503], 1},
		{"client_cap", s.Outcomes.ByReason[ledger.Unsent][ledger.ReasonClientCap], 1},
		{"ttft count (ok only)", s.TTFT.Count, 3},
		{"ttfr count", s.TTFR.Count, 1},
		{"e2e count (ok only)", s.E2E.Count, 3},
		{"inter-chunk count (every gap)", s.InterChunk.Count, 3},
		{"tpot count (usage > 1 only)", s.TPOT.Count, 1},
		{"dispatch lag (every dispatched)", s.DispatchLag.Count, 8},
		{"rejected time", s.RejectedTime.Count, 2},
		{"censored age", s.CensoredAge.Count, 1},
		{"good (no gates: every ok)", s.Good, 3},
	}
	for _, c := range ints {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	durs := []struct {
		name      string
		got, want time.Duration
	}{
		{"ttft p50", s.TTFT.P50, 200 * ms},
		{"ttft max", s.TTFT.Max, 300 * ms},
		{"ttft from dispatch max", s.TTFTFromDispatch.Max, 297 * ms},
		{"ttfr", s.TTFR.P50, 50 * ms},
		{"e2e max excludes censored", s.E2E.Max, 3000 * ms},
		{"inter-chunk max", s.InterChunk.Max, 30 * ms},
		{"tpot", s.TPOT.P50, (999*ms - 100*ms) / 10},
		{"rejected max", s.RejectedTime.Max, 60 * ms},
		{"censored age", s.CensoredAge.Max, 9000 * ms},
		{"lag max", s.DispatchLag.Max, 8 * ms},
	}
	for _, c := range durs {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	floats := []struct {
		name      string
		got, want float64
	}{
		{"achieved", s.AchievedRate, 0.8},
		{"accepted/offered", s.AcceptedFraction, 6.0 / 8},
		{"completed/accepted (injected cancel left out)", s.CompletedFraction, 3.0 / 5},
		{"goodput", s.GoodputPerSecond, 0.3},
		{"good fraction (injected cancel left out)", s.GoodFraction, 3.0 / 8},
	}
	for _, c := range floats {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if s.Mode != ledger.ModeOpen {
		t.Errorf("mode = %q, want taken from records", s.Mode)
	}
}

func TestGates(t *testing.T) {
	recs := []ledger.Record{
		okRec(0, ms, 100*ms, 1000*ms, 11), // tpot ≈ 89.9ms
		okRec(0, ms, 600*ms, 1000*ms, 11), // misses TTFT
		okRec(0, ms, 100*ms, 5000*ms, 11), // misses E2E and TPOT
		okRec(0, ms, 100*ms, 1000*ms, 0),  // TPOT unverifiable
		okRec(0, ms, 100*ms, 1000*ms, 1),  // one token: TPOT vacuous
		failRec(0, ms, 10*ms, ledger.HTTPError, ledger.ReasonServerError),
	}
	recs[1].Class = "long"
	tests := []struct {
		name string
		cfg  Config
		good int
		miss GateMisses
	}{
		{"no gates", Config{}, 5, GateMisses{}},
		{"ttft", Config{Gates: Gates{TTFT: 500 * ms}}, 4, GateMisses{TTFT: 1}},
		{"all", Config{Gates: Gates{TTFT: 500 * ms, TPOT: 100 * ms, E2E: 2 * time.Second}}, 3, GateMisses{TTFT: 1, TPOT: 1, E2E: 1, Unverifiable: 1}},
		{"class override", Config{Gates: Gates{TTFT: 500 * ms}, ClassGates: map[string]Gates{"long": {TTFT: time.Second}}}, 5, GateMisses{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Window = 2 * time.Second
			s := Summarize(tt.cfg, recs)
			if s.Good != tt.good || s.GateMisses != tt.miss {
				t.Errorf("good=%d misses=%+v, want %d %+v", s.Good, s.GateMisses, tt.good, tt.miss)
			}
			if want := float64(tt.good) / 2; s.GoodputPerSecond != want {
				t.Errorf("goodput %v want %v", s.GoodputPerSecond, want)
			}
		})
	}
}

func TestValidity(t *testing.T) {
	n := func(count int, lag time.Duration, mode ledger.Mode) []ledger.Record {
		out := make([]ledger.Record, count)
		for i := range out {
			out[i] = okRec(time.Duration(i)*ms, lag, 10*ms, 20*ms, 2)
			out[i].Mode = mode
		}
		return out
	}
	tests := []struct {
		name   string
		cfg    Config
		recs   []ledger.Record
		valid  bool
		reason string
		note   string
		cause  cause.Cause
	}{
		{"on rate", Config{RequestedRate: 100, Window: 10 * time.Second}, n(1000, ms, ledger.ModeOpen), true, "", "", ""},
		{"within poisson noise", Config{RequestedRate: 100, Window: 10 * time.Second}, n(880, ms, ledger.ModeOpen), true, "", "", ""},
		{"rate too low", Config{RequestedRate: 100, Window: 10 * time.Second}, n(700, ms, ledger.ModeOpen), false, "achieved rate", "", cause.RateNotReached},
		{"rate too high", Config{RequestedRate: 100, Window: 10 * time.Second}, n(1300, ms, ledger.ModeOpen), false, "achieved rate", "", cause.RateNotReached},
		{"lag", Config{RequestedRate: 100, Window: 10 * time.Second}, n(1000, 20*ms, ledger.ModeOpen), false, "1000 of 1000 dispatches later than 10ms (100.0 %", "", cause.DispatchLag},
		{"lag custom threshold", Config{RequestedRate: 100, Window: 10 * time.Second, Validity: verdict.ValidityConfig{MaxLagP99: 50 * ms}}, n(1000, 20*ms, ledger.ModeOpen), true, "", "", ""},
		{"lag above a custom threshold", Config{RequestedRate: 100, Window: 10 * time.Second, Validity: verdict.ValidityConfig{MaxLagP99: 15 * ms}}, n(1000, 20*ms, ledger.ModeOpen), false, "later than 15ms", "", cause.DispatchLag},
		{"few arrivals", Config{RequestedRate: 0.5, Window: 10 * time.Second}, n(1, ms, ledger.ModeOpen), true, "", "not judged", ""},
		{"closed loop", Config{RequestedRate: 100, Window: 10 * time.Second}, n(10, ms, ledger.ModeClosed), true, "", "coordinated omission", ""},
		{"client cap", Config{RequestedRate: 100, Window: 10 * time.Second},
			append(n(999, ms, ledger.ModeOpen), failRec(0, 0, 0, ledger.Unsent, ledger.ReasonClientCap)), false, "client_cap", "", cause.InFlightCap},
		{"heavily capped: the cap is the one cause, not also the rate", Config{RequestedRate: 100, Window: 10 * time.Second},
			append(n(500, ms, ledger.ModeOpen), capped(500)...), false, "500 arrival(s) unsent (client_cap)", "", cause.InFlightCap},
		{"budget unsent is not a generator fault", Config{RequestedRate: 1, Window: 100 * time.Second},
			append(n(99, ms, ledger.ModeOpen), failRec(0, 0, 0, ledger.Unsent, ledger.ReasonBudget)), true, "", "", ""},
		{"budget spent: the rate fell, and the reason says why", Config{RequestedRate: 10, Window: 100 * time.Second},
			append(n(500, ms, ledger.ModeOpen), budgetSpent(500)...), false, "500 arrival(s) were withheld", "", cause.RateNotReached},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Summarize(tt.cfg, tt.recs).Validity
			if v.Valid != tt.valid {
				t.Fatalf("valid = %v, want %v (%v)", v.Valid, tt.valid, v.Reasons())
			}
			if tt.reason != "" && !strings.Contains(strings.Join(v.Reasons(), "\n"), tt.reason) {
				t.Errorf("reasons %q lack %q", v.Reasons(), tt.reason)
			}
			if tt.valid && (len(v.Reasons()) > 0 || len(v.Causes) > 0) {
				t.Errorf("valid with reasons %q", v.Reasons())
			}
			if tt.note != "" && !strings.Contains(strings.Join(v.Notes, "\n"), tt.note) {
				t.Errorf("notes %q lack %q", v.Notes, tt.note)
			}
			if tt.cause != "" {
				if len(v.Causes) != 1 || v.Causes[0].Cause != tt.cause || v.Causes[0].Reason != v.Reasons()[0] || v.Causes[0].Action == "" {
					t.Errorf("causes %+v, want one %s with its reason and an action", v.Causes, tt.cause)
				}
			}
		})
	}
}

func capped(n int) []ledger.Record {
	out := make([]ledger.Record, n)
	for i := range out {
		out[i] = failRec(0, 0, 0, ledger.Unsent, ledger.ReasonClientCap)
		out[i].Planned = time.Duration(i) * ms
	}
	return out
}

// TestLagRuleIsTheP99: the count rule (LagP99Exceeds) says "p99 above the
// limit" exactly when the nearest-rank p99 of the same lags is above it,
// for every count and every number of late lags.
func TestLagRuleIsTheP99(t *testing.T) {
	const limit = 10 * ms
	for n := 1; n <= 400; n++ {
		for over := 0; over <= min(n, 8); over++ {
			d := quantile.NewDist(0)
			for i := range n {
				lag := ms
				if i < over {
					lag = limit + ms
				}
				d.Add(lag)
			}
			if got, want := verdict.LagP99Exceeds(n, over), d.Quantile(0.99) > limit; got != want {
				t.Fatalf("n=%d over=%d: rule %v, p99 %v > %v is %v", n, over, got, d.Quantile(0.99), limit, want)
			}
		}
	}
}

// TestHostCauses: a late generator is blamed on the host only when the host
// measurably lacked CPU over the same window.
func TestHostCauses(t *testing.T) {
	late := verdict.Evidence{Mode: ledger.ModeOpen, LagCount: 100, LagOver: 8, LagP99: 30 * ms}
	for _, tc := range []struct {
		name string
		host verdict.HostHealth
		want cause.Cause
		text string
	}{
		{"not measured", verdict.HostHealth{}, cause.DispatchLag, "health was not measured"},
		{"idle host", verdict.HostHealth{Known: true, SchedCount: 1000, SchedP99: 40 * time.Microsecond, ProcessCPU: 0.2, CPUs: 2, ProcessCPUKnown: true}, cause.DispatchLag, "Go scheduler latency p99 40µs"},
		{"scheduler latency", verdict.HostHealth{Known: true, SchedCount: 1000, SchedP99: 14 * ms}, cause.HostStarved, "Go scheduler latency p99 14ms"},
		{"just below a quarter of the limit", verdict.HostHealth{Known: true, SchedCount: 1000, SchedP99: 2400 * time.Microsecond}, cause.DispatchLag, "not measurably starved"},
		{"steal", verdict.HostHealth{Known: true, Steal: 0.25, StealKnown: true}, cause.HostStarved, "CPU steal 25%"},
		{"prober saturated", verdict.HostHealth{Known: true, ProcessCPU: 1.95, CPUs: 2, ProcessCPUKnown: true}, cause.HostStarved, "used 1.95 of its 2 cores"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := late
			e.Host = tc.host
			v := verdict.ValidityConfig{}.Judge(e)
			if v.Valid || !v.Has(tc.want) || len(v.Causes) != 1 {
				t.Fatalf("causes %+v, want %s", v.Causes, tc.want)
			}
			if !strings.Contains(v.Reasons()[0], tc.text) || !strings.Contains(v.Reasons()[0], "8 of 100 dispatches later than 10ms") {
				t.Errorf("reason %q lacks %q or the lag", v.Reasons()[0], tc.text)
			}
			if a := v.Causes[0].Action; a == "" || (tc.want != cause.DispatchLag && a != tc.want.Action()) {
				t.Errorf("action %q", v.Causes[0].Action)
			}
		})
	}
	// A starved host with a punctual generator is not an invalid verdict.
	e := verdict.Evidence{Mode: ledger.ModeOpen, LagCount: 100, LagOver: 1, Host: verdict.HostHealth{Known: true, SchedCount: 10, SchedP99: 50 * ms}}
	if v := (verdict.ValidityConfig{}).Judge(e); !v.Valid {
		t.Errorf("a punctual generator on a busy host judged invalid: %v", v.Reasons())
	}
	for _, c := range cause.Generator {
		if c.Action() == "" {
			t.Errorf("cause %s has no action", c)
		}
	}
}

func TestRateBoundsShrinkRelativeToLambda(t *testing.T) {
	prev := math.Inf(1)
	for _, lambda := range []float64{10, 100, 1000, 100000} {
		lo, hi := verdict.RateBounds(lambda, 0.1, 3.29)
		if !(lo < lambda*0.9 && hi > lambda*1.1) {
			t.Fatalf("λ=%v: bounds [%v,%v] must contain the tolerance band", lambda, lo, hi)
		}
		width := (hi - lo) / lambda
		if width >= prev {
			t.Fatalf("relative width must shrink with λ: %v then %v", prev, width)
		}
		prev = width
	}
}

func TestAccumulatorConcurrentSink(t *testing.T) {
	defer goleak.VerifyNone(t)
	a := NewAccumulator(Config{})
	var sink ledger.Sink = a
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 250 {
				r := okRec(time.Duration(g*1000+i)*ms, ms, 10*ms, 20*ms, 0)
				sink.Record(&r)
				if i%50 == 0 {
					_ = a.Summary()
				}
			}
		}()
	}
	wg.Wait()
	if s := a.Summary(); s.Planned != 1000 || s.Completed != 1000 || s.TTFT.Count != 1000 {
		t.Fatalf("lost records: %+v", s)
	}
}

func TestSummaryIsASnapshot(t *testing.T) {
	a := NewAccumulator(Config{})
	r := okRec(0, ms, 10*ms, 20*ms, 0)
	a.Add(&r)
	s := a.Summary()
	s.Outcomes.ByOutcome[ledger.OK] = 99
	if a.Summary().Outcomes.ByOutcome[ledger.OK] != 1 {
		t.Fatal("Summary must return copies of its maps")
	}
}

func TestCheckGatesAgreesWithSummary(t *testing.T) {
	g := Gates{TTFT: 150 * ms, TPOT: 50 * ms, E2E: time.Second}
	recs := []ledger.Record{
		okRec(0, ms, 100*ms, 900*ms, 20),
		okRec(0, ms, 200*ms, 900*ms, 20),
		okRec(0, ms, 100*ms, 1900*ms, 20),
		okRec(0, ms, 100*ms, 900*ms, 0), // no usage: TPOT gate skipped
		failRec(0, ms, 10*ms, ledger.Rejected, ledger.ReasonStatus429),
		failRec(0, ms, 10*ms, ledger.Cancelled, ledger.ReasonInjected),
	}
	want := []bool{true, false, false, true, false, false}
	good := 0
	for i := range recs {
		if got := IsGood(&recs[i], g); got != want[i] {
			t.Errorf("record %d: good=%v want %v (%+v)", i, got, want[i], CheckGates(&recs[i], g))
		}
		if want[i] {
			good++
		}
	}
	if s := Summarize(Config{Gates: g}, recs); s.Good != good {
		t.Errorf("summary good %d, CheckGates good %d", s.Good, good)
	}
}

func BenchmarkAccumulatorAdd(b *testing.B) {
	a := NewAccumulator(Config{Gates: Gates{TTFT: 100 * ms}})
	r := okRec(0, ms, 50*ms, 500*ms, 20, 10*ms, 11*ms, 12*ms)
	for b.Loop() {
		a.Add(&r)
	}
}

func BenchmarkSummary10k(b *testing.B) {
	a := NewAccumulator(Config{Window: time.Minute, RequestedRate: 200})
	for i := range 10000 {
		r := okRec(time.Duration(i)*ms, ms, time.Duration(i%500)*ms, time.Second, 20, 10*ms)
		a.Add(&r)
	}
	for b.Loop() {
		_ = a.Summary()
	}
}

func budgetSpent(n int) []ledger.Record {
	out := make([]ledger.Record, n)
	for i := range out {
		out[i] = failRec(time.Duration(i)*ms, 0, 0, ledger.Unsent, ledger.ReasonBudget)
	}
	return out
}

// TestGoodputNeverAbovePlannedRate: goodput counts good arrivals planned in
// the window (the cohort by planned time: completions during the drain
// count, arrivals planned outside do not, retries are not demand), so it
// never exceeds planned / window, whatever finishes when.
func TestGoodputNeverAbovePlannedRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const window = 2 * time.Second
	for trial := range 300 {
		var recs []ledger.Record
		id := uint64(0)
		for range 1 + rng.IntN(60) {
			p := ms + time.Duration(rng.Int64N(int64(3*window)))     // some outside the window [window/2, 3·window/2)
			end := time.Duration(rng.Int64N(int64(5 * time.Second))) // finishing late: during the drain
			id++
			if rng.IntN(3) > 0 {
				r := okRec(p, ms, end/2+ms, end+2*ms, 2)
				r.ID = id
				recs = append(recs, r)
				continue
			}
			// Rejected, then retried (ok or not) however late.
			first := failRec(p, ms, 5*ms, ledger.Rejected, ledger.ReasonStatus429)
			first.ID = id
			recs = append(recs, first)
			id++
			retry := okRec(p+end, ms, end/2+ms, end+2*ms, 2)
			if rng.IntN(2) == 0 {
				retry = failRec(p+end, ms, 5*ms, ledger.Rejected, ledger.ReasonStatus429)
			}
			retry.ID, retry.Attempt, retry.RetryOf, retry.FirstPlanned = id, 2, first.ID, p
			recs = append(recs, retry)
		}
		s := Summarize(Config{RequestedRate: 10, Start: window / 2, Window: window}, recs)
		if s.Good > s.Planned || s.GoodputPerSecond > float64(s.Planned)/window.Seconds()+1e-9 {
			t.Fatalf("trial %d: good %d of %d planned, goodput %.3f above the planned rate %.3f", trial, s.Good, s.Planned, s.GoodputPerSecond, float64(s.Planned)/window.Seconds())
		}
	}
}
