package daemon

import (
	"fmt"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/ladder"
)

func TestLadderPhase(t *testing.T) {
	s := time.Second
	target := func(name string, every, offset time.Duration, daily string, enabled bool) config.Target {
		var tg config.Target
		tg.Name = name
		tg.Ladder.Enabled = enabled
		tg.Ladder.Schedule = config.Schedule{Every: config.Duration(every), Offset: config.Duration(offset), Daily: daily}
		return tg
	}
	fifty := func(limit int) *config.Config {
		c := &config.Config{Limits: config.Limits{MaxConcurrentLadders: limit}}
		for i := range 50 {
			c.Targets = append(c.Targets, target(fmt.Sprintf("t%02d", 49-i), 2*time.Minute, 0, "", true)) // listed backwards: name order counts
		}
		return c
	}
	mixed := &config.Config{Limits: config.Limits{MaxConcurrentLadders: 1}, Targets: []config.Target{
		target("a", time.Hour, 0, "", true), target("b", time.Hour, 0, "", true), target("c", time.Hour, 0, "", true),
		target("d", time.Hour, 5*time.Minute, "", true), // another offset: its own timetable
		target("e", time.Hour, 0, "", false),            // no ladder
		target("f", 0, 0, "03:00", true), target("g", 0, 0, "03:00", true),
	}}
	hourly := ladder.Schedule{Every: time.Hour}
	tests := []struct {
		name string
		cfg  *config.Config
		who  string
		s    ladder.Schedule
		want time.Duration
	}{
		{"50 ladders every 2m, one at a time: the first", fifty(1), "t00", ladder.Schedule{Every: 2 * time.Minute}, 0},
		{"50 ladders every 2m, one at a time: the second, 2.4s later", fifty(1), "t01", ladder.Schedule{Every: 2 * time.Minute}, 2400 * time.Millisecond},
		{"50 ladders every 2m, one at a time: the last", fifty(1), "t49", ladder.Schedule{Every: 2 * time.Minute}, 49 * 2400 * time.Millisecond},
		{"50 ladders, two at a time: t01 beside t00", fifty(2), "t01", ladder.Schedule{Every: 2 * time.Minute}, 0},
		{"50 ladders, two at a time: t49 in the 25th slot", fifty(2), "t49", ladder.Schedule{Every: 2 * time.Minute}, 24 * 4800 * time.Millisecond},
		{"50 ladders, 50 at a time: the timetable as written", fifty(50), "t49", ladder.Schedule{Every: 2 * time.Minute}, 0},
		{"three hourly: c two thirds of an hour in", mixed, "c", hourly, 40 * time.Minute},
		{"three hourly: b a third of an hour in", mixed, "b", hourly, 20 * time.Minute},
		{"alone on its offset", mixed, "d", ladder.Schedule{Every: time.Hour, Offset: 5 * time.Minute}, 0},
		{"daily timetables are left alone", mixed, "g", ladder.Schedule{Daily: "03:00"}, 0},
		{"a target not in the configuration", mixed, "zz", hourly, 0},
		{"no timetable", mixed, "a", ladder.Schedule{}, 0},
		{"one of one", &config.Config{Targets: []config.Target{target("a", s, 0, "", true)}}, "a", ladder.Schedule{Every: s}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ladderPhase(tt.cfg, tt.who, tt.s); got != tt.want {
				t.Errorf("ladderPhase(%s) = %v, want %v", tt.who, got, tt.want)
			}
		})
	}
}

// TestDaemonSpreadsTimedLadders: four targets whose ladders run every 8s
// (one 1 s step) on a prober running one ladder at a time fall due 2 s
// apart, in name order, instead of together at each multiple of 8s:
// the status page's next-ladder time says so, and each ran its first timed
// ladder in its own slot, never before it.
func TestDaemonSpreadsTimedLadders(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: daemon ladders in real time")
	}
	fake := newFakeTarget(t)
	const every = 8 * time.Second
	const ladderYAML = `    ladder:
      enabled: true
      schedule: {every: 8s}
      steps: [10]
      step_duration: 1s
      gap: 100ms
      arrival: constant
      max_rate: 50
      max_lag_p99: 1s
      settle_max: 0s
      abort: {on_generator_invalid: false}
`
	const n = 4
	var targets []string
	for i := range n {
		targets = append(targets, targetYAML(fmt.Sprintf("t%d", n-1-i), fake.url, 1, ladderYAML))
	}
	sink := &recSink{}
	r := startDaemon(t, loadConfig(t, configYAML("2s", targets...)), func(o *Options) { o.Sinks = append(o.Sinks, sink) })
	slot := every / n
	r.d.mu.Lock()
	runs := map[string]*targetRun{}
	for name, run := range r.d.targets {
		runs[name] = run
	}
	r.d.mu.Unlock()
	now := time.Now()
	for i := range n {
		name := fmt.Sprintf("t%d", i)
		run := runs[name]
		if want := time.Duration(i) * slot; run.ladderPhase != want {
			t.Errorf("%s: phase %v, want %v", name, run.ladderPhase, want)
		}
		next := run.nextLadder(now)
		if pos := time.Duration(next.UnixNano() % int64(every)); pos != time.Duration(i)*slot {
			t.Errorf("%s: next ladder at %s, %v into its 8s period, want %v", name, next.Format("15:04:05.000"), pos, time.Duration(i)*slot)
		}
	}
	waitFor(t, 30*time.Second, "a timed ladder on every target", func() bool {
		r.d.mu.Lock()
		defer r.d.mu.Unlock()
		return len(r.d.last) == n
	})
	epoch := time.Now().Add(-r.d.led.Now())
	spans := ladderSpans(sink)
	for i := range n {
		name := fmt.Sprintf("t%d", i)
		sp, ok := spans[name]
		if !ok {
			t.Fatalf("%s: no ladder records", name)
		}
		// A constant 10 req/s step plans its first arrival 50 ms in.
		start := epoch.Add(sp[0] - 50*time.Millisecond)
		pos := time.Duration(start.UnixNano() % int64(every))
		late := pos - time.Duration(i)*slot
		t.Logf("%s: first ladder started %v into its 8s period (due at %v): %v late", name, pos.Round(time.Millisecond), time.Duration(i)*slot, late.Round(time.Millisecond))
		// Never early (a millisecond for the epoch's reading); late by
		// less than its slot on any host that keeps its timers.
		if late < -time.Millisecond || late >= slot {
			t.Errorf("%s: started %v into its period, outside its slot [%v, %v)", name, pos, time.Duration(i)*slot, time.Duration(i+1)*slot)
		}
	}
	if peak := peakOverlap(spans); peak > 1 {
		t.Errorf("%d ladders at once, want 1", peak)
	}
}
