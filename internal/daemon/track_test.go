package daemon

import (
	"strings"
	"testing"
	"time"
)

func TestValidityWindow(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		lags    []time.Duration // one per 10ms from t0
		capped  int             // client_cap arrivals at t0
		checkAt time.Duration
		want    bool
	}{
		{name: "no samples", checkAt: time.Second, want: true},
		{name: "all on time", lags: repeat(200, time.Millisecond), checkAt: 3 * time.Second, want: true},
		{name: "1% late is p99 on the gate", lags: append(repeat(198, time.Millisecond), repeat(2, 50*time.Millisecond)...), checkAt: 3 * time.Second, want: true},
		{name: "2% late", lags: append(repeat(196, time.Millisecond), repeat(4, 50*time.Millisecond)...), checkAt: 3 * time.Second, want: false},
		{name: "one late of few", lags: append(repeat(20, time.Millisecond), 20*time.Millisecond), checkAt: time.Second, want: false},
		{name: "exactly 10ms is within", lags: repeat(50, 10*time.Millisecond), checkAt: time.Second, want: true},
		{name: "client cap", lags: repeat(200, time.Millisecond), capped: 1, checkAt: 3 * time.Second, want: false},
		{name: "late lags age out", lags: repeat(100, time.Second), checkAt: 2 * time.Minute, want: true},
		{name: "client cap ages out", capped: 3, checkAt: 2 * time.Minute, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := newValidityWindow(time.Minute, 10*time.Millisecond)
			for i, l := range tc.lags {
				v.observe(t0.Add(time.Duration(i)*10*time.Millisecond), l, false)
			}
			for range tc.capped {
				v.observe(t0, 0, true)
			}
			if got := v.valid(t0.Add(tc.checkAt)); got != tc.want {
				t.Errorf("valid = %v, want %v", got, tc.want)
			}
		})
	}
}

func repeat(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

func TestFlightSet(t *testing.T) {
	f := newFlightSet()
	if n, _ := f.snapshot(); n != 0 {
		t.Fatalf("empty set holds %d", n)
	}
	f.add(1, 300*time.Millisecond)
	f.add(2, 100*time.Millisecond)
	f.add(3, 200*time.Millisecond)
	if n, oldest := f.snapshot(); n != 3 || oldest != 100*time.Millisecond {
		t.Fatalf("snapshot = %d, %s; want 3, 100ms", n, oldest)
	}
	f.remove(2)
	if n, oldest := f.snapshot(); n != 2 || oldest != 200*time.Millisecond {
		t.Fatalf("after remove: %d, %s; want 2, 200ms", n, oldest)
	}
}

func TestIdentityState(t *testing.T) {
	v1, v2 := "build-1", "build-2"
	cases := []struct {
		name  string
		steps []func(s *targetState) (string, string, bool)
		want  []bool // ok after each step
		final string // model/version after the last step
	}{
		{
			name: "poll configured: wait for the first poll and a model",
			steps: []func(s *targetState) (string, string, bool){
				func(s *targetState) (string, string, bool) { return s.observeIdentity("m", nil, false) },
				func(s *targetState) (string, string, bool) { return s.observeIdentity("", &v1, true) },
				func(s *targetState) (string, string, bool) { return s.observeIdentity("", &v2, true) },
			},
			want:  []bool{false, true, true},
			final: "m/build-2",
		},
		{
			name: "failed first poll still completes the identity",
			steps: []func(s *targetState) (string, string, bool){
				func(s *targetState) (string, string, bool) { return s.observeIdentity("", nil, true) },
				func(s *targetState) (string, string, bool) { return s.observeIdentity("m", nil, false) },
			},
			want:  []bool{false, true},
			final: "m/",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTargetState()
			var got []string
			for i, step := range tc.steps {
				m, v, ok := step(s)
				if ok != tc.want[i] {
					t.Fatalf("step %d: ok = %v, want %v", i, ok, tc.want[i])
				}
				got = append(got, m+"/"+v)
			}
			if last := got[len(got)-1]; last != tc.final {
				t.Errorf("identity = %q, want %q", last, tc.final)
			}
		})
	}
}

// TestGeneratorInvalidOnClientCap: an arrival suppressed by the in-flight
// cap makes llmprobe_generator_valid 0.
func TestGeneratorInvalidOnClientCap(t *testing.T) {
	fake := newFakeTarget(t)
	fake.mode.Store(modeStall)
	y := strings.Replace(slowTimeouts(targetYAML("t1", fake.url, 20, "")), "max_in_flight: 64", "max_in_flight: 1", 1)
	r := startDaemon(t, loadConfig(t, configYAML("200ms", y)), nil)
	waitFor(t, 5*time.Second, "generator invalid", func() bool {
		v, ok := sum(r.metrics(t), "llmprobe_generator_valid", "target", "t1")
		return ok && v == 0
	})
	v, _ := sum(r.metrics(t), "llmprobe_requests_total", "target", "t1", "outcome", "unsent", "reason", "client_cap")
	if v < 1 {
		t.Errorf("generator invalid without a client_cap arrival (%v)", v)
	}
}
