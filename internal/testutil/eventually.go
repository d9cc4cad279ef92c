package testutil

import (
	"testing"
	"time"
)

// pollEvery is how often Eventually and EventuallyOK check: within/250, at
// least every millisecond and at most every second (a 5 s wait polls every
// 20 ms, a minute every 240 ms).
func pollEvery(within time.Duration) time.Duration {
	return min(max(within/250, time.Millisecond), time.Second)
}

// Eventually polls cond until it holds, and fails the test (Fatalf, naming
// what it waited for) when within passes first.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	every := pollEvery(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(every)
	}
}

// EventuallyOK polls fn until it returns nil, and fails the test (Fatalf,
// naming what it waited for and fn's last error) when within passes first.
func EventuallyOK(t testing.TB, within time.Duration, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	every := pollEvery(within)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, within, err)
		}
		time.Sleep(every)
	}
}
