package protocol

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// bodyServer is a server that does not read a request's body: after the
// headers it reads read bytes of the body, answers 413 when answer, and
// ends as end says ("close": with the body unread the kernel resets the
// connection, FIN then RST; "rst": SO_LINGER 0; "hold": neither reads nor
// closes until the test ends). Over TLS (HTTP/1.1 by ALPN) when conf is
// set, on plain TCP otherwise.
func bodyServer(t *testing.T, conf *tls.Config, read int64, answer bool, end string) string {
	t.Helper()
	s := testutil.NewRawServer(t, func(c *testutil.RawConn) {
		var rw io.ReadWriter = c
		if conf != nil {
			tc := tls.Server(c.Conn, conf)
			if tc.Handshake() != nil {
				return
			}
			rw = tc
		}
		br := bufio.NewReader(rw)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		_, _ = io.CopyN(io.Discard, br, read)
		if answer {
			_, _ = io.WriteString(rw, "HTTP/1.1 413 Content Too Large\r\nContent-Type: application/json\r\nContent-Length: 27\r\nConnection: close\r\n\r\n{\"error\":\"body too large\"}\n")
		}
		switch end {
		case "rst":
			_ = c.Conn.(*net.TCPConn).SetLinger(0)
		case "hold":
			<-c.Stop
		}
	})
	if conf != nil {
		return "https://" + s.Addr()
	}
	return s.URL()
}

// earlyTransports are the two transports side by side: the streaming
// HTTP/1.1 one (plain HTTP) and net/http's (HTTPS, HTTP/1.1 by ALPN).
func earlyTransports(t *testing.T) []struct {
	name string
	conf *tls.Config
	c    *Client
} {
	t.Helper()
	certPath, keyPath, _ := testutil.SelfSigned(t, t.TempDir(), x509.ExtKeyUsageServerAuth)
	cert, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	conf := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}
	plain, err := NewClient(ClientOptions{Timeouts: Timeouts{Total: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	tlsc, err := NewClient(ClientOptions{Timeouts: Timeouts{Total: 30 * time.Second}, TLS: TLSOptions{CAFile: certPath}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plain.CloseIdleConnections)
	t.Cleanup(tlsc.CloseIdleConnections)
	return []struct {
		name string
		conf *tls.Config
		c    *Client
	}{{"h1 (http)", nil, plain}, {"net/http (https)", conf, tlsc}}
}

// bigPrompt is a request of about n bytes (a long session history).
func bigPrompt(n int) Params {
	return Params{Messages: []Message{{Role: "user", Content: strings.Repeat("x", n)}}}
}

// TestEarlyResponseRecorded (RFC 9112 §9.5; issue 28): a body-size limit
// in front of an API answers 413 before it reads a 1 MiB request and
// closes, resets, or holds the connection unread: through the streaming
// transport the record is http_error/client_error with status 413, every
// time (a response byte read is preferred to the write's failure).
// net/http over HTTPS is shown beside it: its writer's failure and its
// reader's response race (whichever its round trip sees first wins), so
// on a busy host it may end connection_reset: that is counted, not
// failed.
func TestEarlyResponseRecorded(t *testing.T) {
	for _, tr := range earlyTransports(t) {
		got := 0
		for _, end := range []string{"close", "rst", "hold"} {
			for i := range 3 {
				res, rec := probe(t, tr.c, context.Background(), bodyServer(t, tr.conf, 0, true, end), bigPrompt(1<<20))
				t.Logf("%s, 413 then %s, #%d: %s/%s status %d %q", tr.name, end, i+1, res.Outcome, res.Reason, rec.Status, res.Err)
				is413 := res.Outcome == ledger.HTTPError && res.Reason == ledger.ReasonClientError && rec.Status == http.StatusRequestEntityTooLarge
				if is413 {
					got++
				}
				raced := tr.conf != nil && res.Outcome == ledger.TransportError && res.Reason == ledger.ReasonConnectionReset
				if !is413 && !raced {
					t.Errorf("%s, 413 then %s: %s/%s status %d %q, want http_error/client_error status 413", tr.name, end, res.Outcome, res.Reason, rec.Status, res.Err)
				}
			}
		}
		t.Logf("%s: the 413 recorded in %d of 9", tr.name, got)
	}
}

// TestResetDuringBody (issue 28): a server that resets (or closes with the
// body unread) while a 1 MiB request is written, without a response, ends
// the request transport_error/connection_reset in the socket's words
// (reset or broken pipe), never "http/2 stream reset" on HTTP/1.1 and
// never transport_other.
func TestResetDuringBody(t *testing.T) {
	for _, tr := range earlyTransports(t) {
		for _, end := range []string{"rst", "close"} {
			for i := range 3 {
				res, _ := probe(t, tr.c, context.Background(), bodyServer(t, tr.conf, 16<<10, false, end), bigPrompt(1<<20))
				t.Logf("%s, %s during the body, #%d: %s/%s %q", tr.name, end, i+1, res.Outcome, res.Reason, res.Err)
				if res.Outcome != ledger.TransportError || res.Reason != ledger.ReasonConnectionReset || strings.Contains(res.Err, "http/2") {
					t.Errorf("%s, %s during the body: %s/%s %q, want transport_error/connection_reset in HTTP/1.1's words", tr.name, end, res.Outcome, res.Reason, res.Err)
				}
			}
		}
	}
}
