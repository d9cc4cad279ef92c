package protocol

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// The tests of timed fixtures (stall_idle, stall_total) need this process
// on schedule: the replay server must write its segments when declared,
// and the client must read them and fire its timers when due. On a shared
// host neither is sure. These helpers measure both, so that such a test
// asserts "the client did what the fixture says, or the run was off
// schedule for a host cause, measured" and never wall-clock luck.

// writeClock wraps a handler's ResponseWriter and stamps each write of
// the body: when the server actually sent each segment.
type writeClock struct {
	http.ResponseWriter
	mu      sync.Mutex
	arrived time.Time // the request, at the handler
	header  time.Time
	writes  []time.Time
}

func (w *writeClock) WriteHeader(code int) {
	w.mu.Lock()
	w.header = time.Now()
	w.mu.Unlock()
	w.ResponseWriter.WriteHeader(code)
}

func (w *writeClock) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.header.IsZero() {
		w.header = time.Now()
	}
	w.writes = append(w.writes, time.Now())
	w.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w *writeClock) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *writeClock) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serverLateness is the worst lateness of the server's writes against the
// declared delays (headers after the request arrived; delay(i) before
// segment i, after the previous one or the headers): each actual gap minus
// the gap declared.
func (w *writeClock) serverLateness(headers time.Duration, delay func(int) time.Duration) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.header.IsZero() {
		return 0
	}
	worst := w.header.Sub(w.arrived) - headers
	prev := w.header
	for i, at := range w.writes {
		worst = max(worst, at.Sub(prev)-delay(i))
		prev = at
	}
	return worst
}

// timedRun is one run of a timed fixture with its host evidence.
type timedRun struct {
	server, client time.Duration // worst server write lateness, worst wake-up lateness
}

// hostCause names the run's host cause when either lateness reaches
// bound (a share of the tightest limit the fixture declares: lateness that
// large can turn an on-time segment into an idle gap, or push content past
// the total limit); "" when the run kept its schedule.
func (r timedRun) hostCause(bound time.Duration) string {
	if bound <= 0 || (r.server < bound && r.client < bound) {
		return ""
	}
	return fmt.Sprintf("this process was off schedule (host starved): replay server's writes up to %v late, a goroutine's wake-up up to %v late, against %v (half the tightest declared limit)",
		r.server.Round(time.Millisecond), r.client.Round(time.Millisecond), bound)
}
