package testutil

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestWakeCanarySeesStarvation: with one processor held by spinners that
// never block, the canary's wake-ups wait for the spinners' preemption
// (about 10 ms each), and Lateness over that window shows it; a window
// no wake-up reached holds nothing.
func TestWakeCanarySeesStarvation(t *testing.T) {
	c := StartWakeCanary(t, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	later := time.Now().Add(time.Hour)
	if worst, total := c.Lateness(later, later.Add(time.Minute)); worst != 0 || total != 0 {
		t.Errorf("lateness %v (sum %v) over a window no wake-up reached", worst, total)
	}
	from := time.Now()
	func() {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		var stop atomic.Bool
		done := make(chan struct{}, 3)
		for range 3 {
			go func() {
				for !stop.Load() {
				}
				done <- struct{}{}
			}()
		}
		time.Sleep(300 * time.Millisecond)
		stop.Store(true)
		for range 3 {
			<-done
		}
	}()
	time.Sleep(20 * time.Millisecond) // a wake-up after the window
	if worst, total := c.Lateness(from, time.Now()); worst < 5*time.Millisecond || total < worst {
		t.Errorf("lateness %v (sum %v) while three spinners held the one processor, want ≥ 5ms", worst, total)
	}
}
