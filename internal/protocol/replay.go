package protocol

import (
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Replays. Both transports (Go's, and h1 by the same rule) send a request
// again, on another connection,
// when a reused keep-alive connection fails before any byte of the
// response: always when nothing of the request was written, and otherwise
// when the request is replayable: a rewindable body (GetBody) and, for a
// POST, an Idempotency-Key header. The Client sends each request with an
// Idempotency-Key of its own (a random value per request, the same on its
// replays; not a secret) and lets the transport replay by its rule, bounded
// (maxReplays). The rule is evidence, not a clock: which connection the
// attempt took (reused from the idle pool) and whether a response byte
// came. An earlier gate also required the failure to be seen within 250 ms
// of the write; on a starved host the prober itself sees a prompt close
// late, and the target was blamed for the prober's pool. A target that
// takes the request and dies is judged by the replay instead: the replay
// takes another connection, and a failure on a fresh one is the target's
// (transport_error/connection_reset). Every replay is counted on the
// ledger record (Replays, ReplayReason, Replayed), and the record's times
// still run from its one dispatch.

// IdempotencyKeyHeader is the header the Client sets on every request that
// does not carry one (or X-Idempotency-Key) already.
const IdempotencyKeyHeader = "Idempotency-Key"

// maxReplays bounds the replays of one request (each on a connection that
// failed as a keep-alive race).
const maxReplays = 3

// notReplayed is the round trip's error when the transport would have
// replayed a request that was replayed maxReplays times already.
type notReplayed struct{}

func (*notReplayed) Error() string { return "protocol: not replayed: replay limit reached" }

// connUse follows one request's connections through httptrace: the
// connection each attempt took and the replays. Its callbacks run on the
// transport's goroutines.
type connUse struct {
	now      func() time.Duration
	mu       sync.Mutex
	conns    int       // connections taken: 1 + replays
	conn     *idleConn // the latest attempt's, nil when not one of ours
	use      uint64    // conn's use by the latest attempt
	replayed time.Duration
}

func (u *connUse) gotConn(ci httptrace.GotConnInfo) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.conns++
	u.conn, u.use = asIdleConn(ci.Conn), 0
	if u.conn != nil {
		u.use = u.conn.nextUse()
	}
	if u.conns > 1 {
		u.replayed = u.now()
	}
}

// allowReplay is the gate the transport passes (through GetBody) before
// sending the request again. The transport asks only when its own rule
// holds (a reused connection failed before the first response byte, or an
// HTTP/2 stream the server refused); the gate bounds the replays.
func (u *connUse) allowReplay() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.conns > maxReplays {
		return &notReplayed{}
	}
	return nil
}

// gate makes req replayable through the gate: an Idempotency-Key unless it
// has one, and a GetBody that asks allowReplay first. A request whose body
// cannot be rewound is left as it is (never replayed once written).
func (u *connUse) gate(req *http.Request) {
	if req.Header.Get(IdempotencyKeyHeader) == "" && req.Header.Get("X-Idempotency-Key") == "" {
		req.Header.Set(IdempotencyKeyHeader, uuid.NewString()) // random (version 4)
	}
	if get := req.GetBody; get != nil {
		req.GetBody = func() (io.ReadCloser, error) {
			if err := u.allowReplay(); err != nil {
				return nil, err
			}
			return get()
		}
	}
}

// stamp records the replays on rec.
func (u *connUse) stamp(rec *ledger.Record) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.conns > 1 {
		rec.Replays = u.conns - 1
		rec.ReplayReason = ledger.ReasonStaleConnection
		rec.Replayed = u.replayed
	}
}

// expireIdle arms the idle timer of the connection the response came on:
// closed after the server's keep-alive timeout ka less the margin, unless
// it is taken for another request first.
func (u *connUse) expireIdle(ka time.Duration) {
	u.mu.Lock()
	c, use := u.conn, u.use
	u.mu.Unlock()
	if c != nil {
		c.expireAfter(use, ka-keepAliveMargin(ka))
	}
}

// h2Attempt is what one round trip through Go's transport did with its
// connection: whether it was a reused HTTP/2 connection and whether a
// response byte came. Go's HTTP/2 transport replays a request only when
// the server says it did not take it (a GOAWAY naming a lower stream, a
// refused stream); a server that closes an idle connection as the request
// is written (nginx at its keepalive_timeout: its GOAWAY, when sent, is
// lost to the reset) fails the request with the connection's error
// (broken pipe, reset, unexpected EOF; h2ConnLost for the connection's
// other streams). That is the keep-alive race of
// HTTP/1 (TestProxyIdleTimeout met it through nginx), and the router
// replays it by the same rule: a reused connection, no response byte, the
// connection lost, a replayable request (replayable), through GetBody's
// gate (maxReplays), counted on the record like every replay.
type h2Attempt struct {
	mu        sync.Mutex
	reusedH2  bool
	firstByte bool
}

func (a *h2Attempt) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(ci httptrace.GotConnInfo) {
			tc, ok := ci.Conn.(*tls.Conn)
			h2 := ok && ci.Reused && tc.ConnectionState().NegotiatedProtocol == "h2"
			a.mu.Lock()
			a.reusedH2 = h2
			a.mu.Unlock()
		},
		GotFirstResponseByte: func() {
			a.mu.Lock()
			a.firstByte = true
			a.mu.Unlock()
		},
	}
}

// lostToPool reports whether err ended an attempt on a reused HTTP/2
// connection that was lost before any response byte.
func (a *h2Attempt) lostToPool(err error) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reusedH2 && !a.firstByte && (staleConnection(err) || errors.Is(err, io.ErrUnexpectedEOF) ||
		h2ConnLost(err.Error()))
}

// h2ConnLost reports whether an error text is Go's for another stream of
// an HTTP/2 connection lost under it: still writing its body
// (errClientConnClosed), or closed by the transport after a stream's
// write failed (errClientConnForceClosed).
func h2ConnLost(s string) bool {
	return strings.Contains(s, "http2: client conn is closed") || strings.Contains(s, "http2: client connection force closed")
}

// replayable reports whether req may be sent twice: an idempotent method,
// or an idempotency key the server can deduplicate by (Go's rule, as h1's).
func replayable(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return req.Header.Get(IdempotencyKeyHeader) != "" || req.Header.Get("X-Idempotency-Key") != ""
}
