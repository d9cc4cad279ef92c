// Package ledger owns the request record: one Record per planned attempt, the
// closed sets of terminal Outcomes and Reasons, and the invariants that keep
// the ledger free of holes (exactly one terminal outcome per record; attempts
// = finished + pending; attempts = dispatched + unsent once nothing is
// pending, attempts = planned when retries are off; nothing pending after
// drain). A retry is its own record, joined to the attempt it repeats
// (RetryOf) and to its arrival's first planned time (FirstPlanned).
//
// Every time in a Record is an offset from the run's monotonic epoch; the one
// wall-clock anchor per run lives in the RunHeader. Latencies are differences
// of offsets, taken from the planned offset unless a figure says otherwise.
//
// The ledger knows nothing of telemetry: sinks (files, ring buffers, metric
// recorders, statistics) subscribe to finished records through Sink.
package ledger
