// Package dispatch turns a plan into requests at absolute times and owns
// every request in flight.
//
// A Group owns the in-flight requests of a run across any number of streams
// sharing one ledger. Open runs an open-loop stream: arrivals come from a
// fixed schedule (a schedule.Sequence) anchored at one start instant, each
// sent at epoch+Start+offset on its own goroutine, never waiting for a
// response; an optional in-flight cap ends arrivals that find it full as
// unsent/client_cap at their planned time. Closed runs N users with think
// time, for comparison only, labelled closed loop in every record. Drain
// waits for what is in flight up to a deadline and then records what remains
// censored/drain_deadline (or cancelled/interrupted on an interrupt), each
// exactly once, so that nothing is pending afterwards.
//
// Inject wraps an Exec with cancellation injection; Retry (off by default)
// makes every retried attempt its own ledger record, counted as an attempt,
// never as new demand.
package dispatch
