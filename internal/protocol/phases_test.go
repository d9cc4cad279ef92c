package protocol

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestPhases (issue 28): every attempt's connection is on its record,
// through both transports, for a new connection and a reused one: the new
// one's resolve (a name), connect and TLS (over TLS) phases, none on the
// reused one, which says reused; the write, processing, first byte and
// first content phases on both; the HTTP version and TLS facts from
// closed sets.
func TestPhases(t *testing.T) {
	plain := httptest.NewServer(streamHandler(roleOnly, content("a"), finishStop, done))
	defer plain.Close()
	tlsSrv := httptest.NewUnstartedServer(streamHandler(roleOnly, content("a"), finishStop, done))
	tlsSrv.EnableHTTP2 = true
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	tlsOpts := TLSOptions{CAFile: caFile}
	for _, tc := range []struct {
		name       string
		base       string
		opts       ClientOptions
		dns, tls   bool
		http, alpn string
	}{
		{"h1, plain HTTP by name", strings.Replace(plain.URL, "127.0.0.1", "localhost", 1), ClientOptions{}, true, false, "1.1", ""},
		// HTTP/1.1 only: the client offers no ALPN.
		{"net/http, HTTPS HTTP/1.1", tlsSrv.URL, ClientOptions{TLS: tlsOpts, DisableHTTP2: true}, false, true, "1.1", "none"},
		{"net/http, HTTPS HTTP/2", tlsSrv.URL, ClientOptions{TLS: tlsOpts}, false, true, "2", "h2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.opts)
			for i, reused := range []bool{false, true} {
				res, rec := probe(t, c, context.Background(), tc.base+"/v1", Params{})
				if res.Outcome != ledger.OK {
					t.Fatalf("request %d: %+v", i+1, res)
				}
				line, _ := json.Marshal(rec.Conn)
				t.Logf("request %d: conn %s", i+1, line)
				checkConn(t, rec, reused, tc.dns && !reused, tc.tls && !reused)
				if c := rec.Conn; c.HTTPVersion != tc.http || c.ALPN != tc.alpn || tc.tls && (c.TLSVersion != "1.3" || c.TLSCipher == "" || c.TLSCipher == ledger.Other) {
					t.Errorf("request %d: HTTP %q ALPN %q TLS %q %q, want HTTP %q ALPN %q and TLS 1.3 with a named cipher", i+1, c.HTTPVersion, c.ALPN, c.TLSVersion, c.TLSCipher, tc.http, tc.alpn)
				}
			}
		})
	}
}

// checkConn checks rec's connection: reused or new, with the dial phases
// a new one had and none on a reused one, and every phase after the
// connection.
func checkConn(t *testing.T, rec *ledger.Record, reused, dns, tls bool) {
	t.Helper()
	c := rec.Conn
	if c == nil {
		t.Fatal("no connection on the record")
	}
	if c.Reused != reused {
		t.Errorf("reused %v, want %v", c.Reused, reused)
	}
	// HTTP/2 writes a request on a goroutine of its own and reports it
	// written when that goroutine is done: possibly after the response's
	// headers (no processing phase), or after the stream's end, or as
	// failed when the server ended the stream first (no write phase).
	// Those phases are then absent, said so; HTTP/1.1 always has them.
	written := c.Wrote > 0 || c.HTTPVersion != "2"
	processing := written && c.Wrote <= rec.Headers
	if !written || !processing {
		t.Logf("HTTP/2: the request reported written at %v, headers at %v: write phase %v, processing phase %v", c.Wrote, rec.Headers, written, processing)
	}
	want := map[ledger.Phase]bool{ledger.PhaseResolve: dns, ledger.PhaseConnect: !reused, ledger.PhaseTLS: tls,
		ledger.PhaseWrite: written, ledger.PhaseProcessing: processing, ledger.PhaseFirstByte: true, ledger.PhaseFirstContent: true}
	for _, p := range ledger.Phases {
		if _, ok := rec.PhaseDuration(p); ok != want[p] {
			t.Errorf("phase %s present %v, want %v", p, ok, want[p])
		}
	}
	if c.Got < rec.Dispatched || written && c.Wrote < c.Got {
		t.Errorf("stamps out of order: dispatched %v, connection %v, written %v", rec.Dispatched, c.Got, c.Wrote)
	}
}

// TestDialPhasesAreTheRequestsOwn: a new connection takes the dial
// phases of the request's own dial only when that dial was complete
// (connected, and over TLS handshaken) when the connection came: HTTP/2
// hands a connection another request dialed to every waiting request.
func TestDialPhasesAreTheRequestsOwn(t *testing.T) {
	for _, tc := range []struct {
		name           string
		overTLS        bool
		connect, tls   bool // the own dial's steps done before GotConn
		reused         bool
		wantConn, want bool // connect and tls phases on the record
	}{
		{"plain, own dial", false, true, false, false, true, false},
		{"tls, own dial", true, true, true, false, true, true},
		{"tls, own dial not handshaken: another's connection", true, true, false, false, false, false},
		{"no own dial: another's connection", true, false, false, false, false, false},
		{"reused", true, true, true, true, false, false},
	} {
		var clock time.Duration
		p := &phaseTrace{now: func() time.Duration { clock += time.Millisecond; return clock }, overTLS: tc.overTLS}
		if tc.connect {
			p.connectStarted("tcp", "a")
			p.connectDone("tcp", "a", nil)
		}
		if tc.tls {
			p.tlsStarted()
			p.tlsDone(tls.ConnectionState{}, nil)
		}
		p.gotConn(httptrace.GotConnInfo{Reused: tc.reused})
		var rec ledger.Record
		p.stamp(&rec, nil)
		_, okConn := rec.PhaseDuration(ledger.PhaseConnect)
		_, okTLS := rec.PhaseDuration(ledger.PhaseTLS)
		if okConn != tc.wantConn || okTLS != tc.want || rec.Conn.Reused != tc.reused {
			t.Errorf("%s: connect %v tls %v reused %v, want %v %v %v", tc.name, okConn, okTLS, rec.Conn.Reused, tc.wantConn, tc.want, tc.reused)
		}
	}
}
