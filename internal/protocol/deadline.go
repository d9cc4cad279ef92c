package protocol

import (
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TimeoutCause is a cancellation cause the Client classifies as a timeout:
// a request whose context ends with it (context.WithDeadlineCause,
// context.WithCancelCause) is recorded timeout with reason r (one of the
// timeout reasons), its error text naming limit, exactly as when one of
// the Client's own timers fires. A caller's own bound on a request (the
// /probe endpoint's scrape timeout) is a timeout, not a cancellation.
func TimeoutCause(r ledger.Reason, limit time.Duration) error {
	return &timeoutError{reason: r, limit: limit}
}
