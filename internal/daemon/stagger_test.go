package daemon

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

func TestStartStagger(t *testing.T) {
	st := newTargetState()
	if got := startStagger(st, 5); got != 5*StaggerStep {
		t.Errorf("first start of target 5: stagger %v, want %v", got, 5*StaggerStep)
	}
	for _, index := range []int{5, 9, 0} { // a reload, the target moved in the list
		if got := startStagger(st, index); got != 0 {
			t.Errorf("a later start at index %d: stagger %v, want none", index, got)
		}
	}
	if got := startStagger(newTargetState(), 0); got != 0 {
		t.Errorf("target 0: stagger %v, want none", got)
	}
}

// TestReloadDelaysNoUnchangedTarget reloads eight targets (constant
// arrivals at 10 req/s: one every 100 ms) with the same configuration
// plus a ninth: no unchanged target's arrivals pause at the reload for
// longer than an interval and a half plus the swap itself (staggered, the
// eighth's would pause 7 × 137 ms = 959 ms more), while the added target
// starts staggered by its place. Planned times are the schedule's: a busy
// host delays dispatch, not them.
func TestReloadDelaysNoUnchangedTarget(t *testing.T) {
	fake := newFakeTarget(t)
	const n, rate = 8, 10.0
	var targets []string
	for i := range n {
		targets = append(targets, targetYAML(fmt.Sprintf("t%d", i), fake.url, rate, ""))
	}
	sink := &recSink{}
	r := startDaemon(t, loadConfig(t, configYAML("2s", targets...)), func(o *Options) { o.Sinks = []ledger.Sink{sink} })
	last := fmt.Sprintf("t%d", n-1)
	waitFor(t, 10*time.Second, "the last target's arrivals", func() bool {
		return sink.count(func(s seen) bool { return s.target == last }) >= 3
	})
	reloadAt := r.d.led.Now()
	r.mustReload(t, loadConfig(t, configYAML("2s", append(targets, targetYAML("added", fake.url, rate, ""))...)))
	waitFor(t, 10*time.Second, "the added target's arrivals", func() bool {
		return sink.count(func(s seen) bool { return s.target == "added" }) >= 2
	})
	time.Sleep(300 * time.Millisecond)
	// The swap: from the first arrival of the added target less its
	// stagger and the constant schedule's half interval.
	added := plannedOf(sink, "added")
	swapAt := added[0] - n*StaggerStep - time.Duration(0.5/rate*float64(time.Second))
	if swapAt < reloadAt {
		t.Errorf("the added target's first arrival at %v, %v after the reload: not staggered by its place (%v)", added[0], added[0]-reloadAt, n*StaggerStep)
	}
	interval := time.Duration(float64(time.Second) / rate)
	for i := range n {
		name := fmt.Sprintf("t%d", i)
		planned := plannedOf(sink, name)
		var pause time.Duration
		for k := 1; k < len(planned); k++ {
			if planned[k] > reloadAt-interval && planned[k-1] < swapAt+2*interval {
				pause = max(pause, planned[k]-planned[k-1])
			}
		}
		t.Logf("%s: longest pause between arrivals around the reload %v (interval %v)", name, pause, interval)
		// Without a stagger the pause is at most the old stream's last
		// interval cut short, the swap, and half an interval; allow the
		// swap's loop 150 ms on a busy host.
		if bound := interval*3/2 + 150*time.Millisecond; pause > bound {
			t.Errorf("%s: arrivals paused %v at the reload, more than %v: the reload delayed an unchanged target", name, pause, bound)
		}
	}
}

// plannedOf is a target's planned offsets, in order.
func plannedOf(sink *recSink, target string) []time.Duration {
	var out []time.Duration
	for _, s := range sink.where(func(s seen) bool { return s.target == target }) {
		out = append(out, s.planned)
	}
	slices.Sort(out)
	return out
}
