package dispatch

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Retry is the retry policy. The zero value is off (the default). When on,
// every attempt is its own ledger record with Attempt n (1-based) and
// counts as an attempt, never as new demand: Counts.Planned counts first
// attempts only, Counts.Attempts all of them. A retry is planned when its
// backoff ends and sent then (subject to the stream's cap: a full cap ends it
// unsent/client_cap and the chain); retries continue during a drain but a
// backoff still running at the drain deadline or an interrupt is abandoned.
type Retry struct {
	// MaxAttempts is the most attempts per arrival, the first included;
	// 0 or 1 turns retries off.
	MaxAttempts int
	// On lists the outcomes that are retried; empty means rejected and
	// transport_error. Censored, cancelled and unsent are never retried.
	On []ledger.Outcome
	// Backoff is the wait before the second attempt (default 100ms),
	// doubled for each later attempt up to MaxBackoff (default 10s); Jitter
	// of it is drawn from Seed and the arrival (see Backoff), and the wait
	// is never shorter than the server's Retry-After.
	Backoff    time.Duration
	MaxBackoff time.Duration
	Jitter     float64
	Seed       uint64
}

// backoff is the policy's Backoff.
func (r Retry) backoff() Backoff {
	return Backoff{Base: r.Backoff, Max: r.MaxBackoff, Jitter: r.Jitter, Seed: r.Seed}
}

// Enabled reports whether retries are on.
func (r Retry) Enabled() bool { return r.MaxAttempts > 1 }

// Validate reports a clear error for an impossible policy.
func (r Retry) Validate() error {
	if r.MaxAttempts < 0 {
		return fmt.Errorf("dispatch: retry max attempts must be ≥ 0, got %d", r.MaxAttempts)
	}
	if err := r.backoff().Validate(); err != nil {
		return fmt.Errorf("retry: %w", err)
	}
	for _, o := range r.On {
		switch o {
		case ledger.Unsent, ledger.Cancelled, ledger.Censored, ledger.OK:
			return fmt.Errorf("dispatch: retry on %q is not allowed (retry only failures the target caused)", o)
		}
		if len(ledger.ReasonsFor(o)) == 0 {
			return fmt.Errorf("dispatch: retry on unknown outcome %q", o)
		}
	}
	return nil
}

// retryable reports whether outcome o after attempt n may be retried.
func (r Retry) retryable(o ledger.Outcome, n int) bool {
	if !r.Enabled() || n >= r.MaxAttempts {
		return false
	}
	if len(r.On) == 0 {
		return o == ledger.Rejected || o == ledger.TransportError
	}
	for _, x := range r.On {
		if x == o {
			return true
		}
	}
	return false
}

// delay is the wait after attempt n (1-based) of the arrival key failed,
// honouring the server's Retry-After: never sooner than it asked. ok is
// false when Retry-After asks for longer than MaxBackoff: the arrival is
// then not retried rather than retried early.
func (r Retry) delay(n int, key uint64, retryAfter time.Duration) (time.Duration, bool) {
	hi := r.MaxBackoff
	if hi == 0 {
		hi = max(DefaultMaxBackoff, r.Backoff)
	}
	if retryAfter > hi {
		return 0, false
	}
	return max(r.backoff().Delay(n, key), retryAfter), true
}

// arrivalKey names a record's arrival for the backoff jitter: its first
// planned offset (a pure function of the schedule in open loop) and its
// closed-loop user.
func arrivalKey(rec *ledger.Record) uint64 {
	return uint64(rec.ArrivalPlanned()) ^ uint64(rec.User)<<56
}

// metaOf rebuilds the Meta a record was planned with.
func metaOf(r *ledger.Record) ledger.Meta {
	return ledger.Meta{
		Traffic: r.Traffic, Mode: r.Mode, Target: r.Target, Class: r.Class,
		API: r.API, Step: r.Step, During: r.During, Attempt: r.Attempt, User: r.User, TTFTBoundary: r.TTFTBoundary,
		Session: r.Session, Turn: r.Turn, SessionPlanned: r.SessionPlanned,
	}
}
