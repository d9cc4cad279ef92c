package ledger

import "fmt"

// Outcome is the terminal outcome of one planned arrival. The set is closed.
type Outcome string

// The closed set of terminal outcomes.
const (
	OK             Outcome = "ok"              // stream completed normally
	Rejected       Outcome = "rejected"        // 429 or 503: the target refused admission
	HTTPError      Outcome = "http_error"      // any other non-2xx status, or a 2xx carrying an error body
	Timeout        Outcome = "timeout"         // a client timeout expired (connect, headers, first content, idle, total)
	TransportError Outcome = "transport_error" // the connection failed (refused, reset, TLS, DNS, EOF before headers)
	StreamError    Outcome = "stream_error"    // the stream was malformed, truncated, empty or carried an in-band error
	Unsent         Outcome = "unsent"          // planned but never sent (client cap, budget, shutdown, rate cap)
	Cancelled      Outcome = "cancelled"       // sent, then cancelled by the client (injection or interrupt)
	Censored       Outcome = "censored"        // still in flight at the drain deadline: its age is a lower bound
)

// Outcomes lists every outcome in a stable order (for reports and metrics).
var Outcomes = []Outcome{OK, Rejected, HTTPError, Timeout, TransportError, StreamError, Unsent, Cancelled, Censored}

// Reason refines an Outcome. The set is closed, and each reason belongs to
// exactly one outcome (see ReasonsFor).
type Reason string

// The closed set of reasons, grouped by outcome.
const (
	// ok
	ReasonStop   Reason = "stop"   // finish_reason stop (or the API's equivalent)
	ReasonLength Reason = "length" // finish_reason length / max_tokens reached
	ReasonOther  Reason = "other"  // any other finish reason, or none given by an API that has none

	// rejected
	ReasonStatus429 Reason = "status_429"
	ReasonStatus503 Reason = "status_503"

	// http_error
	ReasonUnauthorized     Reason = "unauthorized"      // 401, 403
	ReasonNotFound         Reason = "not_found"         // 404 (often a wrong model or path)
	ReasonClientError      Reason = "client_error"      // other 4xx
	ReasonServerError      Reason = "server_error"      // other 5xx
	ReasonUnexpectedStatus Reason = "unexpected_status" // 1xx/3xx that the client did not follow
	ReasonErrorBody        Reason = "error_body"        // 2xx whose body is a JSON error object

	// timeout
	ReasonConnect      Reason = "connect"
	ReasonHeaders      Reason = "headers"
	ReasonFirstContent Reason = "first_content"
	ReasonIdle         Reason = "idle"
	ReasonTotal        Reason = "total"

	// transport_error
	ReasonDial              Reason = "dial"               // a dial failure other than DNS
	ReasonConnectionRefused Reason = "connection_refused" // nothing listening
	ReasonConnectionReset   Reason = "connection_reset"   // reset or closed mid-request/stream
	ReasonStaleConnection   Reason = "stale_connection"   // a connection taken idle from the pool closed before any response byte (however late the prober saw it), on every replay: a pool race
	ReasonTLS               Reason = "tls"
	ReasonTransportOther    Reason = "transport_other"

	// stream_error
	ReasonInBandError   Reason = "in_band_error"   // an {"error": …} object or error event in the stream
	ReasonMalformed     Reason = "malformed"       // an event that is not valid JSON / not the API's shape
	ReasonContentType   Reason = "content_type"    // a 2xx that is not text/event-stream
	ReasonTruncated     Reason = "truncated"       // stream ended without [DONE] / finish reason / stop event
	ReasonEventTooLarge Reason = "event_too_large" // an event over the configured maximum size
	ReasonBufferLimit   Reason = "buffer_limit"    // buffering the event would pass the process-wide bound on buffered event bytes
	ReasonDataAfterDone Reason = "data_after_done" // events after the terminal marker
	ReasonProtocolError Reason = "protocol"        // events out of the API's order
	ReasonNoContent     Reason = "no_content"      // the stream ended without any content, reasoning, finish reason or usage: an empty success is no success

	// unsent
	ReasonClientCap Reason = "client_cap" // the in-flight cap was full at the planned time
	ReasonBudget    Reason = "budget"     // the token or request budget was spent
	ReasonShutdown  Reason = "shutdown"   // the run was stopping at the planned time
	ReasonRateCap   Reason = "rate_cap"   // the hard maximum rate was exceeded
	// ReasonSessionAborted: a later turn of a session whose earlier turn
	// did not end ok (or was itself unsent): it is never sent, and is
	// recorded at the moment the session ended.
	ReasonSessionAborted Reason = "session_aborted"

	// cancelled
	ReasonInjected    Reason = "injected"    // cancellation injection
	ReasonInterrupted Reason = "interrupted" // the run was interrupted (signal, context) before the drain deadline

	// censored
	ReasonDrainDeadline Reason = "drain_deadline"
)

// transport_error reasons that name where the path to the target failed
// (docs/protocols.md#certificates): before them a DNS failure was dial and a
// certificate refused was tls.
const (
	ReasonDNS          Reason = "dns"           // the target's host name did not resolve
	ReasonTLSHostname  Reason = "tls_hostname"  // the certificate's names (SANs) do not include the target's host
	ReasonTLSExpired   Reason = "tls_expired"   // the certificate (or one in its chain) is expired or not yet valid
	ReasonTLSUntrusted Reason = "tls_untrusted" // the certificate chains to no trusted root (unknown authority)
)

// ReasonGateway is the http_error of a 502 or 504 whose body is not the
// API's error object: a gateway in front of the server answered for it,
// having failed to reach its upstream or to hear from it in time.
const ReasonGateway Reason = "gateway"

var reasonsFor = map[Outcome][]Reason{
	OK:             {ReasonStop, ReasonLength, ReasonOther},
	Rejected:       {ReasonStatus429, ReasonStatus503},
	HTTPError:      {ReasonUnauthorized, ReasonNotFound, ReasonClientError, ReasonServerError, ReasonUnexpectedStatus, ReasonErrorBody, ReasonGateway},
	Timeout:        {ReasonConnect, ReasonHeaders, ReasonFirstContent, ReasonIdle, ReasonTotal},
	TransportError: {ReasonDial, ReasonConnectionRefused, ReasonConnectionReset, ReasonStaleConnection, ReasonTLS, ReasonTransportOther, ReasonDNS, ReasonTLSHostname, ReasonTLSExpired, ReasonTLSUntrusted},
	StreamError:    {ReasonInBandError, ReasonMalformed, ReasonContentType, ReasonTruncated, ReasonEventTooLarge, ReasonBufferLimit, ReasonDataAfterDone, ReasonProtocolError, ReasonNoContent},
	Unsent:         {ReasonClientCap, ReasonBudget, ReasonShutdown, ReasonRateCap, ReasonSessionAborted},
	Cancelled:      {ReasonInjected, ReasonInterrupted},
	Censored:       {ReasonDrainDeadline},
}

// ReasonsFor returns the reasons that may accompany outcome o.
func ReasonsFor(o Outcome) []Reason { return reasonsFor[o] }

// Valid reports whether (o, r) is a member of the closed set.
func Valid(o Outcome, r Reason) bool {
	for _, x := range reasonsFor[o] {
		if x == r {
			return true
		}
	}
	return false
}

// Check returns an error naming the pair when it is not in the closed set.
func Check(o Outcome, r Reason) error {
	if _, ok := reasonsFor[o]; !ok {
		return fmt.Errorf("ledger: unknown outcome %q", o)
	}
	if !Valid(o, r) {
		return fmt.Errorf("ledger: reason %q does not belong to outcome %q", r, o)
	}
	return nil
}

// Sent reports whether an outcome implies the request was dispatched.
func (o Outcome) Sent() bool { return o != Unsent }

// Failed reports whether the outcome counts as a failure in availability
// figures: everything but ok. (Cancelled by injection is excluded from
// availability by the stats package, not here.)
func (o Outcome) Failed() bool { return o != OK }
