package testutil

import (
	"sync"
	"testing"
	"time"
)

// WakeCanary is a goroutine that sleeps a tick at a time and records how
// late each wake-up was: how long a runnable goroutine of this process
// waited for a CPU (the OS run queue, the Go scheduler, a GC pause) at
// each moment. A real-time test whose bound depends on this process
// running on time (a poll every 500 ms, a timer) derives its bound from
// the lateness measured over its window, never from luck on a busy host.
type WakeCanary struct {
	stop, done chan struct{}
	mu         sync.Mutex
	at         []time.Time     // each wake-up
	late       []time.Duration // its lateness past the tick asked
}

// StartWakeCanary starts a canary ticking every tick; it stops when the
// test ends.
func StartWakeCanary(t testing.TB, tick time.Duration) *WakeCanary {
	c := &WakeCanary{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		tm := time.NewTimer(tick)
		defer tm.Stop()
		for {
			asked := time.Now()
			tm.Reset(tick)
			select {
			case <-c.stop:
				return
			case <-tm.C:
				now := time.Now() // when this goroutine ran, not when the timer was due
				c.mu.Lock()
				c.at = append(c.at, now)
				c.late = append(c.late, max(now.Sub(asked)-tick, 0))
				c.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { close(c.stop); <-c.done })
	return c
}

// Lateness is the worst wake-up lateness over [from, to] and the sum of
// them: about how long, in all, this process kept runnable goroutines
// waiting in that window (a chain of goroutine hops in it, a poll then a
// handler then a reply, is late by at most about the sum). The first
// wake-up after to counts (a starved canary records its lateness late).
func (c *WakeCanary) Lateness(from, to time.Time) (worst, total time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, at := range c.at {
		if at.Before(from) {
			continue
		}
		worst, total = max(worst, c.late[i]), total+c.late[i]
		if at.After(to) {
			break
		}
	}
	return worst, total
}
