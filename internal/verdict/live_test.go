package verdict

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
)

// TestLiveValidityConfiguredLimit: the live window judges against the
// configured limit, not a built-in 10 ms: 20 ms lags are invalid under the
// default and valid under a 50 ms limit (ladder.max_lag_p99 in the daemon).
func TestLiveValidityConfiguredLimit(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		limit time.Duration
		valid bool
	}{{0, false}, {15 * ms, false}, {50 * ms, true}} {
		v := NewLiveValidity(time.Minute, ValidityConfig{MaxLagP99: tc.limit})
		for i := range 300 {
			v.Observe(now.Add(time.Duration(i)*100*ms), 20*ms)
		}
		end := now.Add(30 * time.Second)
		got := v.Judge(end, HostHealth{})
		if got.Valid != tc.valid {
			t.Errorf("limit %v: valid %v, want %v (%v)", tc.limit, got.Valid, tc.valid, got.Reasons())
		}
		if !tc.valid && (!got.Has(cause.DispatchLag) || !strings.Contains(got.Reasons()[0], "later than "+fmtDur(ValidityConfig{MaxLagP99: tc.limit}.Limit()))) {
			t.Errorf("limit %v: causes %+v", tc.limit, got.Causes)
		}
		if m := v.MaxLag(end); m != 20*ms {
			t.Errorf("max lag %v, want 20ms", m)
		}
	}
}

// TestLiveValidityReloadedLimit: a changed limit (reload) starts the window
// afresh; the same limit keeps it.
func TestLiveValidityReloadedLimit(t *testing.T) {
	now := time.Unix(2_000_000, 0)
	v := NewLiveValidity(time.Minute, ValidityConfig{})
	for i := range 200 {
		v.Observe(now, time.Duration(i%4)*10*ms) // a quarter above 10 ms
	}
	if v.Judge(now, HostHealth{}).Valid {
		t.Fatal("25% of lags at 30 ms judged valid under 10 ms")
	}
	v.SetConfig(ValidityConfig{}) // same limit: nothing forgotten
	if v.Judge(now, HostHealth{}).Valid {
		t.Fatal("an unchanged limit forgot the window")
	}
	v.SetConfig(ValidityConfig{MaxLagP99: 40 * ms})
	if v.Limit() != 40*ms || !v.Judge(now, HostHealth{}).Valid {
		t.Fatal("a new limit kept counts taken against the old one")
	}
	for i := range 200 {
		v.Observe(now, time.Duration(i%4)*10*ms)
	}
	if !v.Judge(now, HostHealth{}).Valid {
		t.Errorf("30 ms lags judged invalid under a 40 ms limit: %v", v.Judge(now, HostHealth{}).Reasons())
	}
}

// TestLiveValiditySlides: what left the window no longer counts.
func TestLiveValiditySlides(t *testing.T) {
	now := time.Unix(3_000_000, 0)
	v := NewLiveValidity(10*time.Second, ValidityConfig{})
	v.Observe(now, time.Second)
	v.ObserveCapped(now)
	for i := range 50 { // 1 late of 51: the p99 is the late one
		v.Observe(now.Add(time.Duration(i)*50*ms), ms)
	}
	got := v.Judge(now.Add(5*time.Second), HostHealth{})
	if got.Valid || !got.Has(cause.InFlightCap) || !got.Has(cause.DispatchLag) {
		t.Fatalf("inside the window: %+v", got.Causes)
	}
	if v.MaxLag(now.Add(5*time.Second)) != time.Second {
		t.Errorf("max lag %v, want 1s", v.MaxLag(now.Add(5*time.Second)))
	}
	later := now.Add(10 * time.Second)
	if got := v.Judge(later, HostHealth{}); !got.Valid {
		t.Errorf("10s later the late dispatch and the capped arrival still count: %v", got.Reasons())
	}
	if m := v.MaxLag(later); m != ms {
		t.Errorf("max lag %v after the slide, want 1ms", m)
	}
	if m := v.MaxLag(now.Add(time.Hour)); m != 0 {
		t.Errorf("max lag %v an hour later, want 0", m)
	}
}

// TestLiveValidityHostCause: the live verdict names a starved host.
func TestLiveValidityHostCause(t *testing.T) {
	now := time.Unix(5_000_000, 0)
	v := NewLiveValidity(time.Minute, ValidityConfig{})
	for range 50 {
		v.Observe(now, 30*ms)
	}
	got := v.Judge(now, HostHealth{Known: true, SchedCount: 500, SchedP99: 14 * ms})
	if !got.Has(cause.HostStarved) || !strings.Contains(got.Reasons()[0], "prober host starved: Go scheduler latency p99 14ms") {
		t.Errorf("causes %+v", got.Causes)
	}
}

// TestLiveEvidenceFigures: the window's lag percentiles are read over
// every slot's buckets (one bucket shared by two slots counts once, lags
// ≤ 0 count as the minimum), the maximum is exact, and arrivals left
// unsent count whether or not their second saw a dispatch; slots older
// than the window count for nothing.
func TestLiveEvidenceFigures(t *testing.T) {
	ms := time.Millisecond
	v := NewLiveValidity(time.Minute, ValidityConfig{MaxLagP99: 10 * ms})
	t0 := time.Unix(1_800_000_000, 0)
	v.Observe(t0.Add(-2*time.Minute), time.Hour) // out of the window
	v.ObserveCapped(t0.Add(-2 * time.Minute))
	for i := 1; i <= 100; i++ { // 1..100 ms over ten seconds
		v.Observe(t0.Add(time.Duration(i%10)*time.Second), time.Duration(i)*ms)
	}
	v.Observe(t0, 0)
	v.Observe(t0, -ms)
	v.ObserveCapped(t0.Add(3 * time.Second))
	v.ObserveCapped(t0.Add(20 * time.Second)) // a second with no dispatch
	now := t0.Add(30 * time.Second)
	v.mu.Lock()
	e := v.evidence(now, HostHealth{})
	v.mu.Unlock()
	if e.LagCount != 102 || e.ClientCap != 2 || e.FirstClientCap != 2 || e.LagMax != 100*ms || !e.LagP99Approx {
		t.Errorf("evidence %+v, want 102 lags, 2 unsent, max 100ms, an approximate p99", e)
	}
	if tol := 99 * ms / 100; e.LagP99 < 99*ms-tol || e.LagP99 > 99*ms+tol { // nearest rank 101 of 102
		t.Errorf("lag p99 %v, want 99ms ± 1 %%", e.LagP99)
	}
	overHard := 0
	for i := 1; i <= 100; i++ {
		if time.Duration(i)*ms > v.hard {
			overHard++
		}
	}
	if e.LagOver != 90 || e.LagOverHard != overHard {
		t.Errorf("over the limit: %d, over the hard limit %v: %d; want 90 and %d", e.LagOver, v.hard, e.LagOverHard, overHard)
	}

	// Few buckets (read without merging): 1..20 ms ten times each.
	few := NewLiveValidity(time.Minute, ValidityConfig{MaxLagP99: 10 * ms})
	for i := range 200 {
		few.Observe(t0.Add(time.Duration(i%30)*time.Second), time.Duration(1+i%20)*ms)
	}
	few.mu.Lock()
	e = few.evidence(now, HostHealth{})
	few.mu.Unlock()
	if e.LagCount != 200 || e.LagMax != 20*ms || e.LagP99 < 20*ms*99/100 || e.LagP99 > 20*ms { // rank 198: 20 ms
		t.Errorf("few buckets: %d lags, p99 %v, max %v; want 200, 20ms, 20ms", e.LagCount, e.LagP99, e.LagMax)
	}
}

// BenchmarkLiveJudge is judging one target's live window, which the
// daemon does for every target every second: a full minute at 0.2 req/s
// (the baseline of a target among 1,000) and at 200 req/s.
func BenchmarkLiveJudge(b *testing.B) {
	for _, rate := range []float64{0.2, 200} {
		b.Run(fmt.Sprintf("%greqps", rate), func(b *testing.B) {
			v := NewLiveValidity(time.Minute, ValidityConfig{})
			t0 := time.Unix(1_800_000_000, 0)
			n := int(rate * 60)
			for i := range n {
				v.Observe(t0.Add(time.Duration(i)*time.Minute/time.Duration(n)), time.Duration(50+i%500)*time.Microsecond)
			}
			now := t0.Add(59 * time.Second)
			b.ReportAllocs()
			for b.Loop() {
				v.Judge(now, HostHealth{})
			}
		})
	}
}
