package dispatch

import (
	"context"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Exec performs one request for rec. It must call dispatched exactly once,
// immediately before handing the request to the transport; an Exec that
// fails before that point (e.g. cannot build the request) still calls it, so
// every record that reaches Exec counts as dispatched. Exec stamps the
// boundaries it measures into rec but never finishes the record: the
// dispatcher does, with the returned ledger.Result. Exec must return promptly once
// ctx is cancelled (Drain waits for it). If the drain deadline or an
// interrupt claimed the request before dispatched was called, dispatched
// does nothing, ctx is already cancelled and the record ends
// unsent/shutdown whatever the Exec returns; once claimed after dispatch,
// the claimer's outcome (censored, cancelled) replaces the Exec's result.
// The Result must be a valid sent outcome/reason pair (ledger.Check); an
// invalid one is recorded as transport_error/transport_other.
type Exec func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result

// Arrivals yields planned offsets, relative to the stream's start, in
// increasing order; ok is false when the schedule is exhausted.
// *schedule.Sequence implements it.
type Arrivals interface {
	Next() (offset time.Duration, ok bool)
}

// Admit is asked at an arrival's planned time whether it may be sent
// (budgets, rate caps). ok=false ends the arrival unsent with reason.
type Admit func(rec *ledger.Record) (reason ledger.Reason, ok bool)
