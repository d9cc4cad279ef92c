package protocol

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// timeoutError is the cancellation cause set by one of the Client's timers.
type timeoutError struct {
	reason ledger.Reason
	limit  time.Duration
}

func (e *timeoutError) Error() string {
	return string(e.reason) + " timeout (" + e.limit.String() + ")"
}

// ClassifyStatus maps a non-2xx HTTP status to the ledger's closed set.
func ClassifyStatus(code int) (ledger.Outcome, ledger.Reason) {
	switch {
	case code == http.StatusTooManyRequests:
		return ledger.Rejected, ledger.ReasonStatus429
	case code == http.StatusServiceUnavailable:
		return ledger.Rejected, ledger.ReasonStatus503
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return ledger.HTTPError, ledger.ReasonUnauthorized
	case code == http.StatusNotFound:
		return ledger.HTTPError, ledger.ReasonNotFound
	case code >= 400 && code < 500:
		return ledger.HTTPError, ledger.ReasonClientError
	case code >= 500 && code < 600:
		return ledger.HTTPError, ledger.ReasonServerError
	default:
		return ledger.HTTPError, ledger.ReasonUnexpectedStatus
	}
}

// FinishReason maps a server's finish/stop reason to an ok reason:
// stop-like reasons to stop, length-like to length, anything else (or none)
// to other.
func FinishReason(s string) ledger.Reason {
	switch s {
	case "stop", "end_turn", "stop_sequence", "eos", "eos_token", "completed":
		return ledger.ReasonStop
	case "length", "max_tokens", "max_output_tokens", "model_length":
		return ledger.ReasonLength
	default:
		return ledger.ReasonOther
	}
}

// MaxRetryAfter is the longest Retry-After kept: a longer one, in either
// form, is stored as MaxRetryAfter and marked clamped.
const MaxRetryAfter = time.Hour

// ParseRetryAfter reads a Retry-After header by one rule for both forms,
// delay-seconds (any number of digits) or an HTTP-date (relative to now):
// 0 when absent, invalid, zero or in the past; above MaxRetryAfter it is
// MaxRetryAfter and clamped is true.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, clamped bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	switch {
	case strings.Trim(v, "0123456789") == "":
		secs, err := strconv.ParseUint(v, 10, 64)
		if err == nil && secs <= uint64(MaxRetryAfter/time.Second) {
			return time.Duration(secs) * time.Second, false
		}
		// Too many seconds for a Duration, or simply more than the cap.
		return MaxRetryAfter, true
	default:
		t, err := http.ParseTime(v)
		if err != nil {
			return 0, false
		}
		d = t.Sub(now) // saturates rather than overflows
	}
	switch {
	case d <= 0:
		return 0, false
	case d > MaxRetryAfter:
		return MaxRetryAfter, true
	}
	return d, false
}

// connTrace records, through httptrace, what a request's connection did:
// the evidence that tells a keep-alive race (the prober's pool) from a
// failing target. None of it is a clock: a prober that is starved of CPU
// sees the close late, but it still sees which connection the attempt
// took and whether any response byte came (see keepAliveRace). Its
// callbacks may run on the transport's goroutines.
type connTrace struct {
	wasIdle   atomic.Bool // the latest attempt's connection was taken idle from the pool (reused, not in use)
	firstByte atomic.Bool // a response byte arrived
}

func (c *connTrace) gotConn(ci httptrace.GotConnInfo) { c.wasIdle.Store(ci.Reused && ci.WasIdle) }
func (c *connTrace) gotFirstByte()                    { c.firstByte.Store(true) }

// keepAliveRace reports whether a connection failure can be a keep-alive
// race rather than a failing target: the latest attempt's connection came
// from the idle pool and no response byte arrived. This is Go's transport
// rule for replaying a request (a reused connection that failed before its
// first response byte: nothingWrittenError, errServerClosedIdle,
// transportReadFromServerError), taken without any time window: how long
// after the write the failure is seen depends on the prober's scheduling
// (a busy host sees a prompt close seconds late), so it is no evidence
// about the target. A target that took the request and died is told apart
// by the replay: it goes to another connection, and a failure on a fresh
// connection is never a keep-alive race.
func (c *connTrace) keepAliveRace() bool {
	return c.wasIdle.Load() && !c.firstByte.Load()
}

// staleConnection reports whether a round-trip error is the connection
// closing under the request (EOF, reset, broken pipe, "server closed idle
// connection") rather than a partial response or anything else; on a
// connection taken idle from the pool (keepAliveRace), that is a
// keep-alive race.
func staleConnection(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "server closed idle connection")
}

// classifyError turns an error from the round trip or the body into a
// result. ctx is the request's context (its cause names the Client's own
// timers); headers says whether response headers had arrived. Messages are
// the Client's own words: never the error's text, which may name the URL.
func classifyError(ctx context.Context, err error, headers bool) ledger.Result {
	if ctx.Err() != nil {
		var te *timeoutError
		if cause := context.Cause(ctx); errors.As(cause, &te) {
			return ledger.Result{Outcome: ledger.Timeout, Reason: te.reason, Err: te.Error()}
		}
		return ledger.Result{Outcome: ledger.Cancelled, Reason: ledger.ReasonInterrupted, Err: "cancelled"}
	}
	res := func(o ledger.Outcome, r ledger.Reason, msg string) ledger.Result {
		return ledger.Result{Outcome: o, Reason: r, Err: msg}
	}
	var (
		dnsErr  *net.DNSError
		opErr   *net.OpError
		netErr  net.Error
		recErr  tls.RecordHeaderError
		verErr  *tls.CertificateVerificationError
		alert   tls.AlertError
		unkAuth x509.UnknownAuthorityError
		hostErr x509.HostnameError
		invErr  x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &dnsErr):
		return res(ledger.TransportError, ledger.ReasonDNS, "name resolution failed")
	case errors.Is(err, syscall.ECONNREFUSED):
		return res(ledger.TransportError, ledger.ReasonConnectionRefused, "connection refused")
	case errors.As(err, &verErr), errors.As(err, &unkAuth), errors.As(err, &hostErr), errors.As(err, &invErr):
		return res(ledger.TransportError, ledger.ReasonTLS, "tls: server certificate not trusted")
	case errors.As(err, &recErr):
		return res(ledger.TransportError, ledger.ReasonTLS, "tls: server did not speak TLS")
	case errors.As(err, &alert):
		return res(ledger.TransportError, ledger.ReasonTLS, "tls: handshake refused by the server")
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		return res(ledger.TransportError, ledger.ReasonConnectionReset, closedText(err, headers))
	case !headers && errors.As(err, &netErr) && netErr.Timeout():
		return res(ledger.Timeout, ledger.ReasonConnect, "connect timeout")
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return res(ledger.TransportError, ledger.ReasonDial, "dial failed")
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "tls:") || strings.Contains(msg, "x509:"):
		return res(ledger.TransportError, ledger.ReasonTLS, "tls: handshake failed")
	case strings.Contains(msg, "stream error") || strings.Contains(msg, "GOAWAY"):
		return res(ledger.TransportError, ledger.ReasonConnectionReset, "http/2 stream reset")
	case strings.Contains(msg, "connection reset"):
		return res(ledger.TransportError, ledger.ReasonConnectionReset, closedText(err, headers))
	case strings.Contains(msg, "response headers exceeded"), strings.Contains(msg, "header list too large"),
		strings.Contains(msg, "header list larger"):
		return res(ledger.TransportError, ledger.ReasonTransportOther, fmt.Sprintf("response headers too large (over %d KiB)", MaxResponseHeaderBytes>>10))
	case strings.Contains(msg, "malformed HTTP"):
		return res(ledger.TransportError, ledger.ReasonTransportOther, "malformed HTTP response")
	}
	return res(ledger.TransportError, ledger.ReasonTransportOther, "transport error")
}

// closedText says how a connection ended under a request, in the words of
// the socket's error (what Go's transport reports too): a broken pipe is
// a write into a connection the server had closed, while the request was
// written; a reset is the server's RST; anything else a close.
func closedText(err error, headers bool) string {
	when := " before response headers"
	if headers {
		when = " mid-stream"
	}
	switch {
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe: the server closed the connection while the request was written"
	case errors.Is(err, syscall.ECONNRESET) || strings.Contains(err.Error(), "connection reset"):
		return "connection reset by the server" + when
	}
	return "connection closed" + when
}
