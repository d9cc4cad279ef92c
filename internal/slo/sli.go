package slo

// What each SLI counts, by the ledger's outcome and reason (their string
// values: this package is a leaf). The recording rules (internal/dashgen)
// and the daemon's status page read these lists, so both count the same
// requests.
//
// Availability (SRE workbook: bad events over valid events) judges requests
// the prober sent: its valid events are sent requests, its bad events the
// sent requests the target failed. Not events at all, with the reason:
//   - unsent: never sent (the prober's budget, in-flight cap, rate cap or
//     shutdown): the target was never asked. The prober's own alerts
//     (LLMProbeGeneratorInvalid, LLMProbeBudgetExhausted) cover them.
//   - cancelled: the prober cancelled it (injection or interrupt).
//   - censored: still in flight at the drain deadline: its fate is unknown.
//   - transport_error/stale_connection: a pooled idle connection closed
//     under the client before any response byte, a client-side pool race
//     the transport retries, not a refusal by the target.
//   - stream_error/buffer_limit: the prober's own process-wide bound on
//     buffered event bytes was reached, not the target's doing.
//
// Latency judges ok requests only: its events are successful first tokens,
// its bad events those slower than the class's TTFT gate. A slow target
// therefore burns the latency budget, never the availability one.

// NotEventOutcomes are the outcomes the availability SLI does not count.
var NotEventOutcomes = []string{"unsent", "cancelled", "censored"}

// NotEventReasons are the reasons (of counted outcomes) the availability
// SLI does not count: client-side artifacts.
var NotEventReasons = []string{"stale_connection", "buffer_limit"}

// FailedOutcomes are the outcomes that are the target's failures.
var FailedOutcomes = []string{"rejected", "http_error", "timeout", "transport_error", "stream_error"}

// GoodOutcome is the one outcome that is a success.
const GoodOutcome = "ok"

// Availability classifies one request for the availability SLI: event
// reports whether it counts at all (it was sent, and its fate is the
// target's), failed whether the target failed it. An outcome of no list
// (none today) counts as a failure: an unknown outcome is not a success.
func Availability(outcome, reason string) (event, failed bool) {
	if in(outcome, NotEventOutcomes) || in(reason, NotEventReasons) {
		return false, false
	}
	return true, outcome != GoodOutcome
}

func in(s string, list []string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
