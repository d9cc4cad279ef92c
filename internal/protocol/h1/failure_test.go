package h1_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/protocol/h1"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// serveN answers n requests on a connection with "ok", then calls last
// (which may write anything) and returns (closing it).
func serveN(n int, last func(c *testutil.RawConn, br *bufio.Reader)) func(c *testutil.RawConn) {
	return func(c *testutil.RawConn) {
		br := bufio.NewReader(c)
		for range n {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
		if last != nil {
			last(c, br)
		}
	}
}

// post sends a POST with a rewindable body and, when key, an
// Idempotency-Key; getBody wraps the request's GetBody.
func post(t *testing.T, tr *h1.Transport, url string, key bool, g *gotConns, getBody func(func() (io.ReadCloser, error)) func() (io.ReadCloser, error)) (string, error) {
	t.Helper()
	ctx := context.Background()
	if g != nil {
		ctx = g.ctx(ctx)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if key {
		req.Header.Set("Idempotency-Key", "k-1")
	}
	if getBody != nil {
		req.GetBody = getBody(req.GetBody)
	}
	return send(tr, req)
}

// TestReplay: a request whose reused connection fails before any response
// byte (the server read it and closed) is sent again on another
// connection when it may be (idempotency key or method, rewindable body);
// GetBody can refuse; a fresh connection's failure is never replayed.
func TestReplay(t *testing.T) {
	// Connection 0 answers one request, then reads the next and closes
	// without a byte; later connections answer every request.
	serve := func(c *testutil.RawConn) {
		if c.Index == 0 {
			serveN(1, func(_ *testutil.RawConn, br *bufio.Reader) { _, _ = http.ReadRequest(br) })(c)
			return
		}
		serveN(10, nil)(c)
	}
	refused := errors.New("refused by the gate")
	cases := []struct {
		name    string
		key     bool
		getBody func(func() (io.ReadCloser, error)) func() (io.ReadCloser, error)
		want    []bool // GotConn's Reused, per attempt
		wantErr error
	}{
		{"replayed with a key", true, nil, []bool{true, false}, nil},
		{"not replayed without a key", false, nil, []bool{true}, io.EOF},
		{"the gate refuses", true, func(func() (io.ReadCloser, error)) func() (io.ReadCloser, error) {
			return func() (io.ReadCloser, error) { return nil, refused }
		}, []bool{true}, refused},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := testutil.NewRawServer(t, serve)
			tr := newTransport(h1.Options{})
			defer tr.CloseIdleConnections()
			if _, err := post(t, tr, srv.URL(), true, nil, nil); err != nil {
				t.Fatal(err)
			}
			var g gotConns
			body, err := post(t, tr, srv.URL(), tc.key, &g, tc.getBody)
			if got := g.reused(); len(got) != len(tc.want) || got[0] != tc.want[0] {
				t.Errorf("GotConn reused = %v, want %v", got, tc.want)
			}
			switch {
			case tc.wantErr == nil && (err != nil || body != "ok"):
				t.Errorf("body %q, %v; want ok after a replay", body, err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil && g.first.Load() {
				t.Error("GotFirstResponseByte fired though no byte came")
			}
		})
	}
	t.Run("fresh connection", func(t *testing.T) {
		srv := testutil.NewRawServer(t, func(c *testutil.RawConn) { _, _ = http.ReadRequest(bufio.NewReader(c)) })
		tr := newTransport(h1.Options{})
		var g gotConns
		_, err := post(t, tr, srv.URL(), true, &g, nil)
		if !errors.Is(err, io.EOF) || len(g.reused()) != 1 {
			t.Errorf("err %v after %d attempts; want EOF after one (a fresh connection is the target's)", err, len(g.reused()))
		}
	})
}

// TestMaxConnsPerHost: requests wait for a connection while the host has
// its bound open, take it when it goes idle, and stop waiting when their
// context ends.
func TestMaxConnsPerHost(t *testing.T) {
	release := make(chan struct{})
	got := make(chan struct{}, 8)
	var open, peak atomic.Int64
	srv := testutil.NewRawServer(t, func(c *testutil.RawConn) {
		n := open.Add(1)
		defer open.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			got <- struct{}{}
			select {
			case <-release:
			case <-c.Stop:
				return
			}
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	tr := newTransport(h1.Options{MaxConnsPerHost: 1})
	defer tr.CloseIdleConnections()
	errs := make(chan error, 3)
	for range 3 {
		go func() { _, err := get(t, tr, srv.URL(), nil); errs <- err }()
	}
	<-got // one request holds the only connection; the others wait
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL(), nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a waiter whose context ended: %v, want context deadline exceeded", err)
	}
	close(release)
	for range 3 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if p := peak.Load(); p != 1 {
		t.Errorf("the server saw %d connections open at once, want 1", p)
	}
}

// TestHeaderBound: response headers, informational ones included, are
// bounded in bytes, with net/http's wording; a few 1xx before the final
// response are passed over (and traced).
func TestHeaderBound(t *testing.T) {
	huge := "X-Big: " + strings.Repeat("h", 8<<10) + "\r\n"
	cases := []struct {
		name, resp string
		wantErr    string
		want1xx    int
	}{
		{"headers over the bound", "HTTP/1.1 200 OK\r\n" + strings.Repeat(huge, 4) + "\r\n", "response headers exceeded", 0},
		{"1xx over the bound", strings.Repeat("HTTP/1.1 103 Early Hints\r\n"+huge+"\r\n", 4) + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "response headers exceeded", 0},
		{"1xx then 200", strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 3) + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "", 3},
		{"malformed", "HTTP/1.1 two hundred\r\n\r\n", "malformed HTTP", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := testutil.NewRawServer(t, func(c *testutil.RawConn) {
				_, _ = http.ReadRequest(bufio.NewReader(c))
				_, _ = io.WriteString(c, tc.resp)
				<-c.Stop
			})
			tr := newTransport(h1.Options{MaxResponseHeaderBytes: 16 << 10})
			defer tr.CloseIdleConnections()
			var n1xx int
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
				Got1xxResponse: func(int, textproto.MIMEHeader) error { n1xx++; return nil },
			})
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL(), nil)
			resp, err := tr.RoundTrip(req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(b) != "ok" || n1xx != tc.want1xx {
				t.Errorf("status %d body %q after %d 1xx; want 200 ok after %d", resp.StatusCode, b, n1xx, tc.want1xx)
			}
		})
	}
}

// TestEndsEarly: a body closed before its end, or whose request's context
// ends, closes its connection (the next request dials), and the read in
// progress returns.
func TestEndsEarly(t *testing.T) {
	srv := testutil.NewRawServer(t, func(c *testutil.RawConn) {
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n")
		}
	})
	tr := newTransport(h1.Options{})
	defer tr.CloseIdleConnections()
	for _, how := range []string{"close", "cancel"} {
		t.Run(how, func(t *testing.T) {
			var g gotConns
			ctx, cancel := context.WithCancel(g.ctx(context.Background()))
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL(), nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 2)
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := resp.Body.Read(buf); done <- err }()
			if how == "close" {
				resp.Body.Close()
			} else {
				cancel()
			}
			if err := <-done; err == nil {
				t.Error("the read in progress returned no error")
			}
			resp.Body.Close()
			var g2 gotConns
			next, _ := http.NewRequestWithContext(g2.ctx(context.Background()), http.MethodGet, srv.URL(), nil)
			resp, err = tr.RoundTrip(next)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := g2.reused(); len(got) != 1 || got[0] {
				t.Errorf("next request's GotConn reused = %v, want a fresh connection", got)
			}
		})
	}
}

// TestIdleTimeout: a connection idle past IdleConnTimeout is closed (the
// server sees its end) and the next request dials.
func TestIdleTimeout(t *testing.T) {
	ended := make(chan struct{}, 1)
	srv := testutil.NewRawServer(t, func(c *testutil.RawConn) {
		serveN(1, func(c *testutil.RawConn, br *bufio.Reader) {
			if _, err := br.ReadByte(); err != nil {
				ended <- struct{}{}
			}
		})(c)
	})
	tr := newTransport(h1.Options{IdleConnTimeout: 20 * time.Millisecond})
	defer tr.CloseIdleConnections()
	if _, err := get(t, tr, srv.URL(), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the idle connection was never closed")
	}
}

// TestPeekClosed: open and quiet is usable; closed by the peer, or with
// bytes nobody asked for, is not; a connection that is not a socket is
// taken as open.
func TestPeekClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dial := func() (client, server net.Conn) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return c, s
	}
	c, s := dial()
	if h1.PeekClosed(c) {
		t.Error("an open, quiet connection reported closed")
	}
	_, _ = s.Write([]byte("HTTP/1.1 408 Request Timeout\r\n\r\n"))
	waitFor(t, "unsolicited bytes seen", func() bool { return h1.PeekClosed(c) })
	c.Close()
	s.Close()
	c, s = dial()
	s.Close()
	waitFor(t, "the peer's close seen", func() bool { return h1.PeekClosed(c) })
	c.Close()
	if !h1.PeekClosed(c) {
		t.Error("a locally closed connection reported open")
	}
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	if h1.PeekClosed(p1) {
		t.Error("a pipe (no socket to peek) reported closed")
	}
}

// TestBodilessResponseWithTrailingBytes: bytes after a response that has
// no body (a 204 followed by a second, unasked-for response in the same
// write) are never read as the next request's response: the connection
// is closed, not pooled, and the next request dials.
func TestBodilessResponseWithTrailingBytes(t *testing.T) {
	var accepted atomic.Int64
	srv := testutil.NewRawServer(t, func(c *testutil.RawConn) {
		if accepted.Add(1) > 1 {
			serveN(1, nil)(c)
			return
		}
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nsmugg")
		_, _ = io.Copy(io.Discard, c) // hold the connection open until the client closes it
	})
	tr := newTransport(h1.Options{})
	defer tr.CloseIdleConnections()
	if body, err := get(t, tr, srv.URL(), nil); err != nil || body != "" {
		t.Fatalf("first request: %q, %v; want an empty 204", body, err)
	}
	var g gotConns
	body, err := get(t, tr, srv.URL(), &g)
	if err != nil || body != "ok" {
		t.Fatalf("second request: %q, %v; want ok from a new connection (not the bytes left after the 204)", body, err)
	}
	if r := g.reused(); len(r) != 1 || r[0] {
		t.Errorf("second request's connections reused %v, want one new connection", r)
	}
}

// TestHTTP10KeepAlive: an HTTP/1.0 response keeps its connection only when
// it says keep-alive.
func TestHTTP10KeepAlive(t *testing.T) {
	for _, tc := range []struct {
		conn  string
		reuse bool
	}{{"", false}, {"Connection: keep-alive\r\n", true}, {"Connection: Keep-Alive, foo\r\n", true}} {
		t.Run(tc.conn, func(t *testing.T) {
			srv := testutil.NewRawServer(t, func(c *testutil.RawConn) {
				br := bufio.NewReader(c)
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					_, _ = io.WriteString(c, "HTTP/1.0 200 OK\r\n"+tc.conn+"Content-Length: 2\r\n\r\nok")
				}
			})
			tr := newTransport(h1.Options{})
			defer tr.CloseIdleConnections()
			var g gotConns
			for range 2 {
				if body, err := get(t, tr, srv.URL(), &g); err != nil || body != "ok" {
					t.Fatalf("%q, %v; want ok", body, err)
				}
			}
			if r := g.reused(); len(r) != 2 || r[1] != tc.reuse {
				t.Errorf("connections reused %v, want the second reused %v", r, tc.reuse)
			}
		})
	}
}
