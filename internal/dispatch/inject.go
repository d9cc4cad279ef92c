package dispatch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// ErrInjected is the cancellation cause of an injected cancellation.
var ErrInjected = errors.New("dispatch: cancellation injected")

// Injection configures cancellation injection: a fraction of requests is
// cancelled by the client after a delay, the way users abandon slow answers,
// and recorded cancelled/injected (outside latency figures).
type Injection struct {
	Fraction float64       // share of requests cancelled, in [0, 1]
	Delay    time.Duration // wait from the Exec's start before cancelling
	MaxDelay time.Duration // when above Delay, the wait is uniform in [Delay, MaxDelay]
	Seed     uint64        // which requests are chosen is a pure function of (Seed, record ID)
}

// Validate reports a clear error for an impossible configuration.
func (in Injection) Validate() error {
	if math.IsNaN(in.Fraction) || in.Fraction < 0 || in.Fraction > 1 {
		return fmt.Errorf("dispatch: cancellation fraction must be in [0, 1], got %v", in.Fraction)
	}
	if in.Delay < 0 || in.MaxDelay < 0 {
		return fmt.Errorf("dispatch: cancellation delay must be ≥ 0, got %v (max %v)", in.Delay, in.MaxDelay)
	}
	return nil
}

// Inject wraps next so that the configured fraction of requests is cancelled
// after the delay. A chosen request that completes ok before its cancel
// lands keeps its ok; one whose cancel lands first is recorded
// cancelled/injected whatever next made of the cancellation. A fraction of
// zero returns next unchanged.
func Inject(in Injection, next Exec) (Exec, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if next == nil {
		return nil, errors.New("dispatch: cancellation injection: no executor to wrap")
	}
	if in.Fraction == 0 {
		return next, nil
	}
	return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		h := splitmix(in.Seed ^ splitmix(rec.ID))
		if unit(h) >= in.Fraction {
			return next(ctx, rec, dispatched)
		}
		delay := in.Delay
		if in.MaxDelay > in.Delay {
			delay += time.Duration(unit(splitmix(h)) * float64(in.MaxDelay-in.Delay))
		}
		cctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		var (
			mu              sync.Mutex
			returned, fired bool
			timer           *time.Timer
		)
		// The delay runs from dispatch, like the user who gives up on a
		// request they sent, not from before the request was built.
		armed := func() {
			if dispatched != nil {
				dispatched()
			}
			mu.Lock()
			defer mu.Unlock()
			if returned {
				return
			}
			timer = time.AfterFunc(delay, func() {
				mu.Lock()
				defer mu.Unlock()
				if !returned {
					fired = true
					cancel(ErrInjected)
				}
			})
		}
		res := next(cctx, rec, armed)
		mu.Lock()
		returned = true
		if timer != nil {
			timer.Stop()
		}
		f := fired
		mu.Unlock()
		if f && res.Outcome != ledger.OK {
			return ledger.Result{Outcome: ledger.Cancelled, Reason: ledger.ReasonInjected, Err: "cancelled by injection"}
		}
		return res
	}, nil
}

// splitmix is SplitMix64's finaliser: a fast, well-mixed hash of x.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unit maps h to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }
