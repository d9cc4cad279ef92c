package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestLiveValidityReadsConfiguredLimit: llmprobe_generator_valid judges
// each target's dispatch lags against its own ladder.max_lag_p99 (not a
// built-in 10 ms), with the same rule as probe and ladder, and publishes
// the cause; a reload with another limit applies it.
func TestLiveValidityReadsConfiguredLimit(t *testing.T) {
	strict := targetYAML("strict", "http://127.0.0.1:1", 0.01, "")
	wide := targetYAML("wide", "http://127.0.0.1:1", 0.01, "    ladder: {max_lag_p99: 50ms}\n")
	r := startDaemon(t, loadConfig(t, configYAML("1s", strict, wide)), nil)
	feed := func(target string, n int, lag time.Duration) {
		for i := range n {
			planned := time.Duration(i+1) * time.Millisecond
			r.d.route.Record(&ledger.Record{Target: target, Class: "chat", Traffic: ledger.TrafficBaseline,
				Planned: planned, Dispatched: planned + lag, End: planned + lag + time.Millisecond, Outcome: ledger.HTTPError, Reason: ledger.ReasonServerError})
		}
	}
	feed("strict", 200, 20*time.Millisecond)
	feed("wide", 200, 20*time.Millisecond)
	m := r.metrics(t)
	if v, ok := sum(m, "llmprobe_generator_valid", "target", "strict"); !ok || v != 0 {
		t.Errorf("strict (10ms): generator_valid %v (present %v), want 0", v, ok)
	}
	lag, _ := sum(m, "llmprobe_generator_invalid_cause", "target", "strict", "cause", "dispatch_lag")
	host, _ := sum(m, "llmprobe_generator_invalid_cause", "target", "strict", "cause", "host_starved")
	throttled, _ := sum(m, "llmprobe_generator_invalid_cause", "target", "strict", "cause", "cgroup_throttled")
	if lag+host+throttled != 1 {
		t.Errorf("strict: causes dispatch_lag %v, host_starved %v, cgroup_throttled %v: want one of them", lag, host, throttled)
	}
	if v, ok := sum(m, "llmprobe_generator_valid", "target", "wide"); !ok || v != 1 {
		t.Errorf("wide (ladder.max_lag_p99 50ms): generator_valid %v (present %v), want 1", v, ok)
	}
	if v, _ := sum(m, "llmprobe_dispatch_lag_max_seconds", "target", "wide"); v != 0.02 {
		t.Errorf("dispatch lag max %v, want 0.02", v)
	}
	// A reload that narrows "wide" to 15ms applies at once (its window
	// starts afresh); 20ms lags are then too late.
	narrowed := targetYAML("wide", "http://127.0.0.1:1", 0.01, "    ladder: {max_lag_p99: 15ms}\n")
	r.mustReload(t, loadConfig(t, configYAML("1s", strict, narrowed)))
	waitFor(t, 5*time.Second, "the reload", func() bool {
		r.d.mu.Lock()
		defer r.d.mu.Unlock()
		w := r.d.targets["wide"]
		return w != nil && w.cfg.Ladder.MaxLagP99.D() == 15*time.Millisecond
	})
	feed("wide", 200, 20*time.Millisecond)
	if v, _ := sum(r.metrics(t), "llmprobe_generator_valid", "target", "wide"); v != 0 {
		t.Errorf("wide after narrowing to 15ms: generator_valid %v, want 0", v)
	}
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
