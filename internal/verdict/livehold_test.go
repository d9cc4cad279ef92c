package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
)

// TestLiveValidityHysteresis: fed a sequence of seconds (10 dispatches
// each, some late) and judged every second over a 10 s window, the live
// verdict turns invalid on the second significant evidence enters, stays
// invalid while the window holds more than 1 % late dispatches (though no
// longer significantly), turns valid on the first clean window, and each
// flip is reported once.
func TestLiveValidityHysteresis(t *testing.T) {
	t0 := time.Unix(6_000_000, 0)
	late := map[int]int{10: 10, 19: 3, 30: 1} // second → late dispatches of its 10
	want := map[int]bool{}                    // second → published valid
	for s := range 40 {
		want[s] = s < 10 || s >= 29 // invalid from 10; 19's 3 of 100 hold it until 19 leaves at 29
	}
	v := NewLiveValidity(10*time.Second, ValidityConfig{})
	var rawValid []int
	for s := range 40 {
		now := t0.Add(time.Duration(s) * time.Second)
		for i := range 10 {
			lag := ms
			if i < late[s] {
				lag = 20 * ms
			}
			v.Observe(now.Add(time.Duration(i)*50*ms), lag)
		}
		end := now.Add(600 * ms)
		got := v.Judge(end, HostHealth{})
		if got.Valid != want[s] {
			t.Fatalf("second %d: valid %v, want %v (%v)", s, got.Valid, want[s], got.Reasons())
		}
		v.mu.Lock()
		raw := v.cfg.Judge(v.evidence(end, HostHealth{}))
		v.mu.Unlock()
		if raw.Valid && !got.Valid {
			rawValid = append(rawValid, s)
			if !got.Has(cause.DispatchLag) || !strings.Contains(got.Reasons()[0], "held invalid until a clean 10s window: 3 of 100 dispatches later than 10ms (3.0 %") {
				t.Errorf("second %d: held verdict %+v", s, got.Causes)
			}
		}
		if s == 12 {
			if again := v.Judge(end, HostHealth{}); again.Valid {
				t.Fatal("a second judgement of the same window flipped")
			}
		}
	}
	// Without hysteresis the verdict would have turned valid at 20 (3 of
	// 100 late is not significant) and stayed valid through 28.
	if len(rawValid) != 9 || rawValid[0] != 20 || rawValid[8] != 28 {
		t.Errorf("seconds held invalid though the rule alone found the window valid: %v, want 20–28", rawValid)
	}
	flips := v.TakeFlips()
	if len(flips) != 2 || flips[0].Valid || !flips[1].Valid {
		t.Fatalf("flips %+v, want invalid then valid", flips)
	}
	if !flips[0].At.Equal(t0.Add(10*time.Second+600*ms)) || len(flips[0].Causes) != 1 || flips[0].Causes[0].Cause != cause.DispatchLag ||
		!strings.Contains(flips[0].Why, "10 of 100 dispatches later than 10ms") {
		t.Errorf("flip to invalid: %+v", flips[0])
	}
	if !flips[1].At.Equal(t0.Add(29*time.Second+600*ms)) || !strings.Contains(flips[1].Why, "a clean 10s window: 0 of 100 dispatches later than 10ms") {
		t.Errorf("flip to valid: %+v", flips[1])
	}
	if f := v.TakeFlips(); len(f) != 0 {
		t.Errorf("flips taken twice: %+v", f)
	}
}

// TestLiveValidityHoldEndsOnReload: a reload with new limits forgets the
// window and the held verdict with it; the hard guard alone turns the
// verdict invalid.
func TestLiveValidityHoldEndsOnReload(t *testing.T) {
	now := time.Unix(7_000_000, 0)
	v := NewLiveValidity(time.Minute, ValidityConfig{})
	v.Observe(now, 150*ms) // one dispatch beyond 10 × 10ms
	for range 99 {
		v.Observe(now, ms)
	}
	if got := v.Judge(now, HostHealth{}); got.Valid || !strings.Contains(got.Reasons()[0], "1 of 100 dispatches later than 100ms") {
		t.Fatalf("one dispatch 150ms late: %v", got.Reasons())
	}
	v.SetConfig(ValidityConfig{LagHardFactor: 20})
	if got := v.Judge(now, HostHealth{}); !got.Valid {
		t.Errorf("after a reload to a 200ms hard limit the held verdict stayed: %v", got.Reasons())
	}
	if f := v.TakeFlips(); len(f) != 1 || f[0].Valid {
		t.Errorf("flips %+v, want the one to invalid (a reload is not a clean window)", f)
	}
}
