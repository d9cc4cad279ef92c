package daemon

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestBudget: with a tiny requests_per_day, arrivals past it end
// unsent/budget, llmprobe_budget_remaining_requests reaches 0, and no
// reload refills the spent budget, not even one that removes and then
// restores it.
func TestBudget(t *testing.T) {
	fake := newFakeTarget(t)
	sink := &recSink{}
	yaml := configYAML("1s", targetYAML("t1", fake.url, 20, "    budget: {requests_per_day: 5}\n"))
	r := startDaemon(t, loadConfig(t, yaml), func(o *Options) { o.Sinks = []ledger.Sink{sink} })

	waitFor(t, 5*time.Second, "budget spent", func() bool {
		v, ok := sum(r.metrics(t), "llmprobe_budget_remaining_requests", "target", "t1")
		return ok && v == 0
	})
	waitFor(t, 5*time.Second, "unsent/budget arrivals", func() bool {
		return sink.count(func(s seen) bool { return s.reason == ledger.ReasonBudget }) >= 5
	})
	if _, ok := sum(r.metrics(t), "llmprobe_budget_remaining_tokens", "target", "t1"); ok {
		t.Error("llmprobe_budget_remaining_tokens present without a token budget")
	}
	r.mustReload(t, loadConfig(t, yaml))
	reloadAt := r.d.led.Now()
	time.Sleep(500 * time.Millisecond)
	if n := sink.count(func(s seen) bool { return s.planned >= reloadAt && s.outcome != ledger.Unsent }); n != 0 {
		t.Errorf("%d requests sent after a reload: the reload refilled the budget", n)
	}
	if n := sink.count(func(s seen) bool { return s.outcome != ledger.Unsent }); n != 5 {
		t.Errorf("%d requests sent with requests_per_day 5", n)
	}

	// A reload that removes the budget: unlimited, and the gauge goes away.
	r.mustReload(t, loadConfig(t, configYAML("1s", targetYAML("t1", fake.url, 20, ""))))
	waitFor(t, 5*time.Second, "the budget gauge removed", func() bool {
		_, ok := sum(r.metrics(t), "llmprobe_budget_remaining_requests", "target", "t1")
		return !ok
	})
	waitFor(t, 5*time.Second, "requests sent again", func() bool {
		return sink.count(func(s seen) bool { return s.outcome == ledger.OK }) >= 10
	})
	// Restored: what was spent meanwhile still counts; nothing is refilled.
	r.mustReload(t, loadConfig(t, yaml))
	waitFor(t, 5*time.Second, "the budget gauge back at 0", func() bool {
		v, ok := sum(r.metrics(t), "llmprobe_budget_remaining_requests", "target", "t1")
		return ok && v == 0
	})
	restoredAt := r.d.led.Now()
	time.Sleep(300 * time.Millisecond)
	if n := sink.count(func(s seen) bool { return s.planned >= restoredAt && s.outcome != ledger.Unsent }); n != 0 {
		t.Errorf("%d requests sent after the budget was restored", n)
	}

	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	c := r.d.led.Counts()
	budget := sink.count(func(s seen) bool { return s.outcome == ledger.Unsent && s.reason == ledger.ReasonBudget })
	shutdown := sink.count(func(s seen) bool { return s.outcome == ledger.Unsent && s.reason == ledger.ReasonShutdown })
	if budget+shutdown+c.Dispatched != c.Planned {
		t.Errorf("planned %d = dispatched %d + unsent/budget %d + unsent/shutdown %d does not hold", c.Planned, c.Dispatched, budget, shutdown)
	}
	if err := r.d.led.Verify(); err != nil {
		t.Fatal(err)
	}
}
