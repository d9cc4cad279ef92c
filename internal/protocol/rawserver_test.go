package protocol

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// rawServer answers every request on a loopback listener by writing what
// answer writes to the raw connection, then holds the connection open until
// the client closes it or the test ends.
func rawServer(t *testing.T, answer func(w io.Writer)) string {
	t.Helper()
	return testutil.NewRawServer(t, func(conn *testutil.RawConn) {
		req, err := http.ReadRequest(bufio.NewReader(conn))
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		answer(conn)
		closed := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, conn); close(closed) }()
		select { // hold until the client gives up or the test ends
		case <-closed:
		case <-conn.Stop:
		}
	}).URL()
}

// doWithin runs one request and fails the test if it has not returned
// within limit (a hang check far above the configured timeouts, not a speed
// assertion).
func doWithin(t *testing.T, c *Client, base string, limit time.Duration) (ledger.Result, *ledger.Record) {
	t.Helper()
	type out struct {
		res ledger.Result
		rec *ledger.Record
	}
	ch := make(chan out, 1)
	go func() {
		res, rec := probe(t, c, context.Background(), base, Params{})
		ch <- out{res, rec}
	}()
	select {
	case o := <-ch:
		return o.res, o.rec
	case <-time.After(limit):
		t.Fatalf("the request did not end within %v: a read ignores the request's timeouts", limit)
		return ledger.Result{}, nil
	}
}

// TestStatus101Ends (chaos case status_101): a 101 Switching Protocols to a
// request that asked for no upgrade, then silence. Go hands back the raw
// connection as the body; the request must still end, as
// http_error/unexpected_status, when its timeouts say so — not hang on a
// read of that connection.
func TestStatus101Ends(t *testing.T) {
	base := rawServer(t, func(w io.Writer) {
		_, _ = io.WriteString(w, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: chaos\r\nConnection: Upgrade\r\n\r\n")
	})
	c := newClient(t, ClientOptions{Timeouts: Timeouts{Total: 500 * time.Millisecond, Idle: 300 * time.Millisecond}})
	res, rec := doWithin(t, c, base, 30*time.Second)
	if res.Outcome != ledger.HTTPError || res.Reason != ledger.ReasonUnexpectedStatus || rec.Status != 101 {
		t.Errorf("got %+v (status %d), want http_error/unexpected_status for status 101", res, rec.Status)
	}
}

// TestBodyReadEndsWithTheRequest: an error body that never ends is read
// only as long as the request lives (its total timeout), whatever status
// it comes with.
func TestBodyReadEndsWithTheRequest(t *testing.T) {
	base := rawServer(t, func(w io.Writer) {
		_, _ = io.WriteString(w, "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"error\":")
	})
	c := newClient(t, ClientOptions{Timeouts: Timeouts{Total: 500 * time.Millisecond}})
	res, _ := doWithin(t, c, base, 30*time.Second)
	if res.Outcome != ledger.HTTPError {
		t.Errorf("got %+v, want http_error", res)
	}
}

// TestContentEncodingRefused (chaos case gzip_sse): the client asks for no
// encoding, so a gzip-encoded event stream is refused as
// stream_error/content_type naming the encoding — not misread as a stream
// the server cut short.
func TestContentEncodingRefused(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = io.WriteString(zw, chunk(`{"content":"hi"}`)+"data: [DONE]\n\n")
	_ = zw.Close()
	for _, enc := range []string{"gzip", "br", "GZIP"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Accept-Encoding") != "" {
				t.Errorf("the client asked for an encoding: %q", r.Header.Get("Accept-Encoding"))
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", enc)
			_, _ = w.Write(gz.Bytes())
		}))
		c := newClient(t, ClientOptions{Timeouts: Timeouts{Total: 5 * time.Second}})
		res, _ := probe(t, c, context.Background(), srv.URL, Params{})
		if res.Outcome != ledger.StreamError || res.Reason != ledger.ReasonContentType || !strings.Contains(res.Err, enc) {
			t.Errorf("Content-Encoding %s: got %+v, want stream_error/content_type naming the encoding", enc, res)
		}
		srv.Close()
	}
	// identity is no encoding at all.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "identity")
		_, _ = io.WriteString(w, chunk(`{"content":"hi"}`)+"data: [DONE]\n\n")
	}))
	defer srv.Close()
	c := newClient(t, ClientOptions{Timeouts: Timeouts{Total: 5 * time.Second}})
	if res, _ := probe(t, c, context.Background(), srv.URL, Params{}); res.Outcome == ledger.StreamError && res.Reason == ledger.ReasonContentType {
		t.Errorf("Content-Encoding identity refused: %+v", res)
	}
}

// TestResponseHeadersBounded (chaos case headers_9mb_then_silence): a
// response whose header section passes MaxResponseHeaderBytes ends
// transport_error/transport_other saying so, instead of being buffered (Go's
// own default is 10 MB per response).
func TestResponseHeadersBounded(t *testing.T) {
	base := rawServer(t, func(w io.Writer) {
		_, _ = io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n")
		line := strings.Repeat("h", 8<<10)
		for i := 0; i < (MaxResponseHeaderBytes/len(line))+8; i++ {
			if _, err := fmt.Fprintf(w, "X-Big-%d: %s\r\n", i, line); err != nil {
				return
			}
		}
	})
	c := newClient(t, ClientOptions{Timeouts: Timeouts{Total: 20 * time.Second, Headers: 20 * time.Second}})
	res, rec := doWithin(t, c, base, 60*time.Second)
	if res.Outcome != ledger.TransportError || res.Reason != ledger.ReasonTransportOther || !strings.Contains(res.Err, "headers too large") {
		t.Errorf("got %+v, want transport_error/transport_other, response headers too large", res)
	}
	if rec.Headers != 0 {
		t.Errorf("headers stamped at %v for a response whose headers were refused", rec.Headers)
	}
}
