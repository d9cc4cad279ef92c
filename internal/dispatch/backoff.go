package dispatch

import (
	"fmt"
	"math"
	"time"
)

// Backoff defaults.
const (
	DefaultBackoff    = 100 * time.Millisecond
	DefaultMaxBackoff = 10 * time.Second
)

// Backoff is the wait after consecutive failures: Base after the first,
// doubling after each further one, never above Max, with the last Jitter
// fraction of it drawn at random from the run's seed so that the same seed
// waits the same: the wait after failure n is d × (1 − Jitter·u), d =
// min(Base·2^(n−1), Max), u uniform in [0, 1) from (Seed, key, n). It is
// used between a failed attempt and its retry (Retry) and by a closed-loop
// user after a failed request (ClosedConfig.Backoff); open-loop arrivals
// never wait for it (their schedule is fixed).
type Backoff struct {
	Base   time.Duration // 0 = DefaultBackoff
	Max    time.Duration // 0 = DefaultMaxBackoff
	Jitter float64       // in [0, 1]; 0 = none
	Seed   uint64
}

// Validate reports a clear error for an impossible backoff.
func (b Backoff) Validate() error {
	switch {
	case b.Base < 0 || b.Max < 0:
		return fmt.Errorf("dispatch: backoff must be ≥ 0, got %v and max %v", b.Base, b.Max)
	case b.Max > 0 && b.Max < b.Base:
		return fmt.Errorf("dispatch: max backoff %v is below the backoff %v", b.Max, b.Base)
	case math.IsNaN(b.Jitter) || b.Jitter < 0 || b.Jitter > 1:
		return fmt.Errorf("dispatch: backoff jitter must be in [0, 1], got %v", b.Jitter)
	}
	return nil
}

// Delay is the wait after the n-th consecutive failure (n ≥ 1) of what key
// names (a closed-loop user, an arrival).
func (b Backoff) Delay(n int, key uint64) time.Duration {
	base, hi := b.Base, b.Max
	if base <= 0 {
		base = DefaultBackoff
	}
	if hi <= 0 {
		hi = max(DefaultMaxBackoff, base)
	}
	d := base
	for i := 1; i < n && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	if b.Jitter > 0 {
		u := unit(splitmix(b.Seed ^ splitmix(key^splitmix(uint64(n)))))
		d -= time.Duration(b.Jitter * u * float64(d))
	}
	return d
}
