package dispatch

import "sync/atomic"

// limiter is a lock-free in-flight cap; a nil limiter admits everything.
type limiter struct {
	max int64
	n   atomic.Int64
}

func newLimiter(max int) *limiter {
	if max <= 0 {
		return nil
	}
	return &limiter{max: int64(max)}
}

func (l *limiter) acquire() bool {
	if l == nil {
		return true
	}
	for {
		n := l.n.Load()
		if n >= l.max {
			return false
		}
		if l.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (l *limiter) release() {
	if l != nil {
		l.n.Add(-1)
	}
}
