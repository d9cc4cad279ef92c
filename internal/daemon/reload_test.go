package daemon

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// startSim serves the simulator with a fixed ~350ms service time, so that
// requests are in flight at any moment.
func startSim(t *testing.T) string {
	t.Helper()
	c := sim.DefaultConfig()
	c.TTFT, c.TokenTime, c.OutputTokens = sim.FixedDist(0.2), sim.FixedDist(0.05), sim.FixedDist(4)
	return testutil.StartSim(t, c)
}

// TestReload: a new valid config (higher rate, an extra target) takes
// effect, counters are not reset, requests in flight at the reload finish
// normally; a config that cannot be built is refused and the old one keeps
// running.
func TestReload(t *testing.T) {
	simURL := startSim(t)
	fake := newFakeTarget(t)
	sink := &recSink{}
	r := startDaemon(t, loadConfig(t, configYAML("2s", targetYAML("t1", simURL, 5, ""))), func(o *Options) { o.Sinks = []ledger.Sink{sink} })

	waitFor(t, 5*time.Second, "ok requests on t1", func() bool {
		return sink.count(func(s seen) bool { return s.outcome == ledger.OK }) >= 3
	})
	before := r.metrics(t)
	plannedBefore, _ := sum(before, "llmprobe_requests_planned_total", "target", "t1")
	okBefore, _ := sum(before, "llmprobe_requests_total", "target", "t1", "outcome", "ok")
	if plannedBefore < 3 || okBefore < 3 {
		t.Fatalf("before reload: planned %v, ok %v", plannedBefore, okBefore)
	}

	// Reload through the one path, as SIGHUP does, while requests are in flight.
	waitFor(t, 5*time.Second, "a request in flight", func() bool { return r.d.group.InFlight() > 0 })
	reloadAt := r.d.led.Now()
	r.mustReload(t, loadConfig(t, configYAML("2s", targetYAML("t1", simURL, 20, ""), targetYAML("t2", fake.url, 10, ""))))
	waitFor(t, 5*time.Second, "t2 probed", func() bool {
		return sink.count(func(s seen) bool { return s.target == "t2" && s.outcome == ledger.OK }) >= 3
	})
	time.Sleep(1200 * time.Millisecond)
	after := r.metrics(t)
	plannedAfter, _ := sum(after, "llmprobe_requests_planned_total", "target", "t1")
	okAfter, _ := sum(after, "llmprobe_requests_total", "target", "t1", "outcome", "ok")
	if plannedAfter <= plannedBefore || okAfter < okBefore {
		t.Errorf("counters went back after the reload: planned %v → %v, ok %v → %v", plannedBefore, plannedAfter, okBefore, okAfter)
	}
	if v, ok := sum(after, "llmprobe_arrival_rate_requests_per_second", "target", "t1", "traffic", "baseline"); !ok || v != 20 {
		t.Errorf("llmprobe_arrival_rate_requests_per_second{t1,baseline} = %v (%v), want 20", v, ok)
	}
	// The new rate: arrivals planned in a one-second window after the reload.
	win := finishedAtLeast(sink, 14, func(s seen) bool {
		return s.target == "t1" && s.planned >= reloadAt+100*time.Millisecond && s.planned < reloadAt+1100*time.Millisecond
	})
	if win < 14 || win > 22 {
		t.Errorf("t1 planned %d arrivals in the second after the reload, want ≈ 20 (new rate)", win)
	}
	// Requests in flight at the reload finished normally.
	old := sink.where(func(s seen) bool { return s.target == "t1" && s.planned < reloadAt })
	spanning := 0
	for _, s := range old {
		if s.outcome != ledger.OK {
			t.Errorf("a request planned before the reload ended %s/%s, want ok", s.outcome, s.reason)
			break
		}
		if s.end > reloadAt {
			spanning++
		}
	}
	if spanning == 0 {
		t.Error("no request was in flight across the reload")
	}

	// A config that validates but cannot be built (its API key variable is
	// unset) is refused, and so is no configuration.
	bad := loadConfig(t, configYAML("2s", targetYAML("t1", simURL, 1, "    api_key_env: LLMPROBE_TEST_SURELY_UNSET_KEY\n")))
	if err := r.reloadTo(nil); err == nil {
		t.Error("a reload to no configuration accepted")
	}
	if err := r.reloadTo(bad); err == nil || !strings.Contains(err.Error(), "targets[0] (t1)") {
		t.Errorf("reload to a bad configuration = %v, want an error naming targets[0] (t1)", err)
	}
	badAt := r.d.led.Now()
	time.Sleep(1100 * time.Millisecond)
	win = finishedAtLeast(sink, 14, func(s seen) bool {
		return s.target == "t1" && s.planned >= badAt && s.planned < badAt+time.Second
	})
	if win < 14 {
		t.Errorf("after a refused reload t1 planned %d arrivals in a second, want ≈ 20 (the old config running)", win)
	}
	if n := sink.count(func(s seen) bool { return s.target == "t2" && s.planned >= badAt }); n < 5 {
		t.Errorf("after a refused reload t2 planned %d arrivals, want it still probed", n)
	}

	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	c := r.d.led.Counts()
	if err := r.d.led.Verify(); err != nil || c.Pending != 0 {
		t.Fatalf("ledger: verify %v, pending %d", err, c.Pending)
	}
	if n := c.ByOutcome[ledger.Censored] + c.ByOutcome[ledger.Cancelled]; n != 0 {
		t.Errorf("%d requests censored or cancelled with a 2s drain of ~350ms requests", n)
	}
}

// TestReloadRemovesTarget: a target a reload drops loses its series once
// its last request finished, and nothing of it is probed any more.
func TestReloadRemovesTarget(t *testing.T) {
	simURL := startSim(t)
	fake := newFakeTarget(t)
	r := startDaemon(t, loadConfig(t, configYAML("2s", targetYAML("t1", simURL, 5, ""), targetYAML("t2", fake.url, 10, ""))), nil)
	waitFor(t, 5*time.Second, "t2 probed", func() bool { return fake.hits.Load() >= 3 })
	r.mustReload(t, loadConfig(t, configYAML("2s", targetYAML("t1", simURL, 5, ""))))
	waitFor(t, 5*time.Second, "t2 series dropped", func() bool {
		_, ok := sum(r.metrics(t), "llmprobe_requests_planned_total", "target", "t2")
		return !ok
	})
	hits := fake.hits.Load()
	time.Sleep(500 * time.Millisecond)
	if n := fake.hits.Load(); n != hits {
		t.Errorf("t2 got %d requests after it was removed", n-hits)
	}
	if _, ok := sum(r.metrics(t), "llmprobe_requests_planned_total", "target", "t1"); !ok {
		t.Error("t1 series gone after a reload that kept t1")
	}
}

// TestConcurrentReloads: reloads racing each other leave exactly one
// generation of streams running (goleak checks that every stream of every
// replaced generation returned), and a reload after Run returned is refused.
func TestConcurrentReloads(t *testing.T) {
	fake := newFakeTarget(t)
	cfg := func(rate float64) *config.Config {
		return loadConfig(t, configYAML("1s", targetYAML("t1", fake.url, rate, ""), targetYAML("t2", fake.url, rate, "")))
	}
	r := startDaemon(t, cfg(5), nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				if err := r.reloadTo(cfg(float64(5 + g*5 + i))); err != nil {
					t.Errorf("reload: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	r.d.mu.Lock()
	running := len(r.d.targets)
	r.d.mu.Unlock()
	if running != 2 {
		t.Errorf("%d targets running after the reloads, want 2", running)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if err := r.d.led.Verify(); err != nil {
		t.Fatal(err)
	}
	if err := r.reloadTo(cfg(5)); err == nil {
		t.Error("a reload after Run returned was accepted")
	}
}

// finishedAtLeast counts the finished records keep accepts, waiting (up to
// 10 s) for at least n: the records of a window are planned by the
// schedule, but on a loaded host the last of them finish well after the
// window's wall second.
func finishedAtLeast(sink *recSink, n int, keep func(seen) bool) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := sink.count(keep)
		if c >= n || time.Now().After(deadline) {
			return c
		}
		time.Sleep(50 * time.Millisecond)
	}
}
