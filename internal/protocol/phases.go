package protocol

import (
	"crypto/tls"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// phaseTrace stamps, through httptrace, the phases of each attempt of one
// request: a new connection's name resolution, connect and TLS handshake,
// when the connection was in hand and when the request was written whole.
// Both transports call the same hooks (h1 dials through the same
// net.Dialer, whose resolve and connect hooks follow the context). The
// stamps are the ledger's clock, as every stamp of the record. Its
// callbacks may run on the transport's goroutines.
type phaseTrace struct {
	now func() time.Duration
	mu  sync.Mutex
	// The dial under way: its starts and durations.
	dnsStart, connectStart, tlsStart time.Duration
	dns, connect, tlsDur             time.Duration
	conn                             ledger.Conn // the latest attempt's
	got                              bool        // an attempt had a connection
	// overTLS: the request goes over TLS, so a dial of its own is
	// complete only with its handshake. Set before the round trip.
	overTLS bool
}

func (p *phaseTrace) dnsStarted(httptrace.DNSStartInfo) { p.start(&p.dnsStart) }
func (p *phaseTrace) dnsDone(i httptrace.DNSDoneInfo)   { p.done(&p.dnsStart, &p.dns, i.Err) }
func (p *phaseTrace) connectStarted(_, _ string)        { p.start(&p.connectStart) }
func (p *phaseTrace) connectDone(_, _ string, err error) {
	p.done(&p.connectStart, &p.connect, err)
}
func (p *phaseTrace) tlsStarted() { p.start(&p.tlsStart) }
func (p *phaseTrace) tlsDone(_ tls.ConnectionState, err error) {
	p.done(&p.tlsStart, &p.tlsDur, err)
}

func (p *phaseTrace) start(at *time.Duration) {
	now := p.now()
	p.mu.Lock()
	*at = now
	p.mu.Unlock()
}

// done sets *d to the time since *start, when the step succeeded.
func (p *phaseTrace) done(start, d *time.Duration, err error) {
	now := p.now()
	p.mu.Lock()
	if err == nil && *start > 0 && now >= *start {
		*d = now - *start
	}
	p.mu.Unlock()
}

// gotConn begins an attempt's facts: a reused connection has no dial
// phases; a new one takes those of the request's own dial when that dial
// is complete (connected, and over TLS handshaken). A new connection
// another request dialed (HTTP/2 gives the first connection up to every
// request waiting for one, while their own dials go on) has no dial
// phases on this record: they were not this request's. The dial's
// figures are then cleared for the next attempt.
func (p *phaseTrace) gotConn(ci httptrace.GotConnInfo) {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conn, p.got = ledger.Conn{Reused: ci.Reused, Got: now}, true
	if !ci.Reused && p.connect > 0 && (!p.overTLS || p.tlsDur > 0) {
		p.conn.DNS, p.conn.Connect, p.conn.TLS = p.dns, p.connect, p.tlsDur
	}
	p.dnsStart, p.connectStart, p.tlsStart, p.dns, p.connect, p.tlsDur = 0, 0, 0, 0, 0, 0
}

func (p *phaseTrace) wroteRequest(i httptrace.WroteRequestInfo) {
	if i.Err != nil {
		return
	}
	now := p.now()
	p.mu.Lock()
	p.conn.Wrote = now
	p.mu.Unlock()
}

// stamp puts the latest attempt's connection on rec, with the response's
// HTTP version and TLS (resp nil: no response).
func (p *phaseTrace) stamp(rec *ledger.Record, resp *http.Response) {
	p.mu.Lock()
	c, got := p.conn, p.got
	p.mu.Unlock()
	if !got {
		return
	}
	if resp != nil {
		c.HTTPVersion = httpVersion(resp.ProtoMajor, resp.ProtoMinor)
		if st := resp.TLS; st != nil {
			c.TLSVersion, c.TLSCipher, c.ALPN = tlsVersion(st.Version), tlsCipher(st.CipherSuite), alpn(st.NegotiatedProtocol)
		}
	}
	rec.Conn = &c
}

// finish fills in the write's stamp when it came after the response's
// headers were read (HTTP/2 writes a request on a goroutine of its own
// and reports it written when it is done, which may be later): called
// when the request ends.
func (p *phaseTrace) finish(rec *ledger.Record) {
	if rec.Conn == nil || rec.Conn.Wrote != 0 {
		return
	}
	p.mu.Lock()
	rec.Conn.Wrote = p.conn.Wrote
	p.mu.Unlock()
}

// httpVersion is a response's version in ledger.HTTPVersions.
func httpVersion(major, minor int) string {
	switch {
	case major == 1 && minor == 0:
		return "1.0"
	case major == 1 && minor == 1:
		return "1.1"
	case major == 2:
		return "2"
	}
	return ledger.Other
}

// tlsVersion is a TLS version in ledger.TLSVersions.
func tlsVersion(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "1.0"
	case tls.VersionTLS11:
		return "1.1"
	case tls.VersionTLS12:
		return "1.2"
	case tls.VersionTLS13:
		return "1.3"
	}
	return ledger.Other
}

// tlsCipher is Go's name of a cipher suite (a closed set: Go's own
// suites), or other for an id Go does not name.
func tlsCipher(id uint16) string {
	if name := tls.CipherSuiteName(id); !strings.HasPrefix(name, "0x") {
		return name
	}
	return ledger.Other
}

// alpn is the negotiated protocol in ledger.ALPNs: the server's string is
// never kept as it is.
func alpn(p string) string {
	switch p {
	case "h2", "http/1.1":
		return p
	case "":
		return "none"
	}
	return ledger.Other
}

// attemptTrace is the one httptrace of a request: what the connection did
// (connTrace: a keep-alive race), which connections it took (connUse:
// replays, keep-alive expiry) and the phases (phaseTrace, nil: not
// traced). One trace, not three composed: httptrace composes hooks with
// reflection, a cost on every request.
func attemptTrace(conn *connTrace, use *connUse, ph *phaseTrace) *httptrace.ClientTrace {
	t := &httptrace.ClientTrace{
		GotConn: func(ci httptrace.GotConnInfo) {
			conn.gotConn(ci)
			use.gotConn(ci)
			if ph != nil {
				ph.gotConn(ci)
			}
		},
		GotFirstResponseByte: conn.gotFirstByte,
	}
	if ph != nil {
		t.DNSStart, t.DNSDone = ph.dnsStarted, ph.dnsDone
		t.ConnectStart, t.ConnectDone = ph.connectStarted, ph.connectDone
		t.TLSHandshakeStart, t.TLSHandshakeDone = ph.tlsStarted, ph.tlsDone
		t.WroteRequest = ph.wroteRequest
	}
	return t
}
