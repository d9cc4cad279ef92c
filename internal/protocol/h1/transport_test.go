package h1_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/protocol/h1"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newTransport(opt h1.Options) *h1.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second}
	opt.Dial = d.DialContext
	return h1.New(opt)
}

// conns counts the connections a server accepted.
type conns struct{ n atomic.Int64 }

func (c *conns) state(_ net.Conn, s http.ConnState) {
	if s == http.StateNew {
		c.n.Add(1)
	}
}

func newServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *conns) {
	t.Helper()
	var cs conns
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = cs.state
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &cs
}

// gotConns records every GotConn of a request.
type gotConns struct {
	mu    sync.Mutex
	infos []httptrace.GotConnInfo
	first atomic.Bool
}

func (g *gotConns) ctx(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) {
			g.mu.Lock()
			g.infos = append(g.infos, i)
			g.mu.Unlock()
		},
		GotFirstResponseByte: func() { g.first.Store(true) },
	})
}

func (g *gotConns) reused() []bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	var r []bool
	for _, i := range g.infos {
		r = append(r, i.Reused)
	}
	return r
}

// get sends a GET to url through tr, reads the whole body and returns it.
func get(t *testing.T, tr *h1.Transport, url string, g *gotConns) (string, error) {
	t.Helper()
	ctx := context.Background()
	if g != nil {
		ctx = g.ctx(ctx)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return send(tr, req)
}

// send sends req through tr and reads the whole body.
func send(tr *h1.Transport, req *http.Request) (string, error) {
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestKeepAlive: bodies framed by length or chunking, read to their end,
// leave the connection for the next request; a response that closes, or
// whose end is the connection's close, does not.
func TestKeepAlive(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		reuse   bool
	}{
		{"content length", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "5")
			_, _ = io.WriteString(w, "hello")
		}, true},
		{"chunked", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "hel")
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, "lo")
		}, true},
		{"no body (204)", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }, true},
		{"connection close", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Connection", "close")
			_, _ = io.WriteString(w, "hello")
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, cs := newServer(t, tc.handler)
			tr := newTransport(h1.Options{})
			defer tr.CloseIdleConnections()
			var g gotConns
			for range 3 {
				if _, err := get(t, tr, srv.URL, &g); err != nil {
					t.Fatal(err)
				}
			}
			want := []bool{false, tc.reuse, tc.reuse}
			if got := g.reused(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("GotConn reused = %v, want %v", got, want)
			}
			wantConns := int64(1)
			if !tc.reuse {
				wantConns = 3
			}
			if n := cs.n.Load(); n != wantConns {
				t.Errorf("server accepted %d connections, want %d", n, wantConns)
			}
		})
	}
}

// TestCloseDelimitedBody: an HTTP/1.1 body without length or chunking
// ends with the connection, which is not reused.
func TestCloseDelimitedBody(t *testing.T) {
	srv := testutil.NewRawServer(t, func(c *testutil.RawConn) {
		_, _ = http.ReadRequest(bufio.NewReader(c))
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close")
	})
	tr := newTransport(h1.Options{})
	defer tr.CloseIdleConnections()
	var g gotConns
	for range 2 {
		body, err := get(t, tr, srv.URL(), &g)
		if err != nil || body != "until close" {
			t.Fatalf("body %q, %v", body, err)
		}
	}
	if got := g.reused(); fmt.Sprint(got) != "[false false]" {
		t.Errorf("reused = %v, want [false false]", got)
	}
}

// TestStreamsAsSent: the body is read as the server writes it, not after
// the response ends.
func TestStreamsAsSent(t *testing.T) {
	next := make(chan struct{})
	srv, _ := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-next
		_, _ = io.WriteString(w, "data: two\n\n")
	})
	tr := newTransport(h1.Options{ReadBufferSize: 1024})
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "data: one\n" {
		t.Fatalf("first line %q, %v (read before the server's second write)", line, err)
	}
	close(next)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "\ndata: two\n\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

// TestIdleClosedByServer: an idle connection its server closed is found
// closed when taken (no request is written into it, none replayed).
func TestIdleClosedByServer(t *testing.T) {
	closed := make(chan struct{}, 1)
	srv := testutil.NewRawServer(t, func(c *testutil.RawConn) {
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		_ = c.Close() // the client holds it idle
		closed <- struct{}{}
	})
	tr := newTransport(h1.Options{})
	defer tr.CloseIdleConnections()
	if _, err := get(t, tr, srv.URL(), nil); err != nil {
		t.Fatal(err)
	}
	<-closed // on loopback the FIN is in the client's socket once close returns
	var g gotConns
	body, err := get(t, tr, srv.URL(), &g)
	if err != nil || body != "ok" {
		t.Fatalf("body %q, %v", body, err)
	}
	if got := g.reused(); len(got) != 1 || got[0] {
		t.Errorf("GotConn reused = %v, want one fresh connection", got)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
