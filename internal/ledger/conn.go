package ledger

import "time"

// Conn is how one attempt had its connection and sent its request, as the
// transport's httptrace hooks saw it (both transports: the streaming
// HTTP/1.1 one and net/http's), for the attempt whose result the record
// holds (the last, when it was replayed). A connection taken from the
// keep-alive pool (Reused) had no name resolution, connect or handshake:
// those phases are absent, never 0. Its strings are from closed sets,
// never the server's text.
type Conn struct {
	Reused bool `json:"reused"`
	// DNS, Connect and TLS are the durations of a new connection's name
	// resolution (absent for an address), TCP connect and TLS handshake.
	DNS     time.Duration `json:"dns_ns,omitempty"`
	Connect time.Duration `json:"connect_ns,omitempty"`
	TLS     time.Duration `json:"tls_ns,omitempty"`
	// Got is when the connection was in hand, Wrote when the request was
	// written whole (stamps, offsets from the epoch like every stamp);
	// Wrote is absent when the response came before the request's end.
	Got   time.Duration `json:"got_conn_ns,omitempty"`
	Wrote time.Duration `json:"wrote_ns,omitempty"`
	// HTTPVersion is the response's version (HTTPVersions), absent
	// without a response; TLSVersion, TLSCipher and ALPN the connection's
	// TLS (TLSVersions, Go's cipher suite names, ALPNs), absent on plain
	// HTTP.
	HTTPVersion string `json:"http_version,omitempty"`
	TLSVersion  string `json:"tls_version,omitempty"`
	TLSCipher   string `json:"tls_cipher,omitempty"`
	ALPN        string `json:"alpn,omitempty"`
}

// The closed sets of Conn's strings; Other stands for any value outside.
var (
	HTTPVersions = []string{"1.0", "1.1", "2", Other}
	TLSVersions  = []string{"1.0", "1.1", "1.2", "1.3", Other}
	ALPNs        = []string{"h2", "http/1.1", "none", Other}
)

// Other is a Conn string's value for what its closed set does not hold.
const Other = "other"

// Phase names one phase of an attempt (Phases).
type Phase string

// The phases, in their order on the wire.
const (
	PhaseResolve      Phase = "resolve"       // name resolution (new connection)
	PhaseConnect      Phase = "connect"       // TCP connect (new connection)
	PhaseTLS          Phase = "tls"           // TLS handshake (new connection over TLS)
	PhaseWrite        Phase = "write"         // connection in hand -> request written whole
	PhaseProcessing   Phase = "processing"    // request written -> response headers: the server's processing
	PhaseFirstByte    Phase = "first_byte"    // response headers -> first body byte
	PhaseFirstContent Phase = "first_content" // first body byte -> first content: the engine's queue and prefill as the client sees it
)

// Phases lists every phase in order.
var Phases = []Phase{PhaseResolve, PhaseConnect, PhaseTLS, PhaseWrite, PhaseProcessing, PhaseFirstByte, PhaseFirstContent}

// PhaseDuration returns phase p of the record's attempt, when it had it:
// a reused connection has no resolve, connect or tls phase, a request
// without response headers no processing, and so on. A phase whose end
// stamp is before its start (a clock that cannot go back does not) is
// absent.
func (r *Record) PhaseDuration(p Phase) (time.Duration, bool) {
	c := r.Conn
	if c == nil {
		return 0, false
	}
	switch p {
	case PhaseResolve:
		return c.DNS, c.DNS > 0
	case PhaseConnect:
		return c.Connect, c.Connect > 0
	case PhaseTLS:
		return c.TLS, c.TLS > 0
	case PhaseWrite:
		return between(c.Got, c.Wrote)
	case PhaseProcessing:
		return between(c.Wrote, r.Headers)
	case PhaseFirstByte:
		return between(r.Headers, r.FirstByte)
	case PhaseFirstContent:
		return between(r.FirstByte, r.FirstContent)
	}
	return 0, false
}

// between is b - a when both stamps were taken and b is not before a.
func between(a, b time.Duration) (time.Duration, bool) {
	if a <= 0 || b <= 0 || b < a {
		return 0, false
	}
	return b - a, true
}
