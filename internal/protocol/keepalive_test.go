package protocol

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// seenRequest is what idleServer saw of one request.
type seenRequest struct {
	conn, n int    // connection (0-based, in accept order) and request on it (0-based)
	key     string // its Idempotency-Key
	closed  bool   // the connection was closed instead of answering it
}

// idleServer is an HTTP/1.1 server on 127.0.0.1 that answers with a short
// complete event stream (Content-Length, no Connection: close) and closes a
// connection:
//   - left idle for idle (0: never) after its last response, as cpp-httplib
//     and uvicorn do;
//   - on reading its request number closeAt (0-based; -1: never), without a
//     response byte (a keep-alive close racing the request);
//
// and sends `Keep-Alive: timeout=ka` when ka ≥ 0. closedIdle receives,
// per connection the client closed while idle, how long after the last
// response it was.
type idleServer struct {
	url        string
	mu         sync.Mutex
	seen       []seenRequest
	clientIdle chan time.Duration // client closed an idle connection, that long after the response
}

func newIdleServer(t *testing.T, idle time.Duration, closeAt int, ka int) *idleServer {
	t.Helper()
	s := &idleServer{clientIdle: make(chan time.Duration, 1024)}
	body := "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	extra := ""
	if ka >= 0 {
		extra = fmt.Sprintf("Keep-Alive: timeout=%d, max=100\r\n", ka)
	}
	s.url = testutil.NewRawServer(t, func(conn *testutil.RawConn) {
		br := bufio.NewReader(conn)
		var last time.Time
		for n := 0; ; n++ {
			if idle > 0 && n > 0 {
				_ = conn.SetReadDeadline(last.Add(idle))
			}
			req, err := http.ReadRequest(br)
			if err != nil {
				if n > 0 && errors.Is(err, io.EOF) {
					s.clientIdle <- time.Since(last)
				}
				return // idle timeout, or the client closed it
			}
			_ = conn.SetReadDeadline(time.Time{})
			_, _ = io.Copy(io.Discard, req.Body)
			rs := seenRequest{conn: conn.Index, n: n, key: req.Header.Get(IdempotencyKeyHeader), closed: n == closeAt}
			s.mu.Lock()
			s.seen = append(s.seen, rs)
			s.mu.Unlock()
			if rs.closed {
				return
			}
			fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n%sContent-Length: %d\r\n\r\n%s", extra, len(body), body)
			last = time.Now()
		}
	}).URL()
	return s
}

func (s *idleServer) requests() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenRequest(nil), s.seen...)
}

// TestReplayOnKeepAliveRace: a server that closes a kept-alive connection
// just as the next request arrives on it (it reads the request, then closes
// without a byte) does not fail the request: the transport sends it again
// on a new connection, with the same Idempotency-Key, it ends ok, and the
// record says it was replayed. Its latency still runs from its dispatch.
func TestReplayOnKeepAliveRace(t *testing.T) {
	c, err := NewClient(ClientOptions{Timeouts: Timeouts{Total: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	srv := newIdleServer(t, 0, 1, -1)
	if res, rec := probe(t, c, context.Background(), srv.url, Params{}); res.Outcome != ledger.OK || rec.Replays != 0 {
		t.Fatalf("first request: %+v, replays %d; want ok, none", res, rec.Replays)
	}
	res, rec := probe(t, c, context.Background(), srv.url, Params{})
	if res.Outcome != ledger.OK {
		t.Fatalf("request on the closing connection: %+v, want ok (replayed)", res)
	}
	if rec.Replays != 1 || rec.ReplayReason != ledger.ReasonStaleConnection {
		t.Errorf("replays %d (%q), want 1 (stale_connection)", rec.Replays, rec.ReplayReason)
	}
	if !(rec.Dispatched < rec.Replayed && rec.Replayed < rec.Headers) {
		t.Errorf("replayed at %v, want between dispatch %v and headers %v", rec.Replayed, rec.Dispatched, rec.Headers)
	}
	if e2e, _ := rec.E2E(); e2e != rec.End-rec.Planned {
		t.Errorf("latency %v not from the planned time", e2e)
	}
	seen := srv.requests()
	if len(seen) != 3 {
		t.Fatalf("server saw %d requests, want 3 (first, closed, replay): %+v", len(seen), seen)
	}
	first, closed, replay := seen[0], seen[1], seen[2]
	if !closed.closed || closed.conn != first.conn || replay.conn == closed.conn || replay.n != 0 {
		t.Errorf("requests %+v: want the second closed on the first connection and replayed on a new one", seen)
	}
	if closed.key == "" || closed.key != replay.key || closed.key == first.key || len(closed.key) != 36 {
		t.Errorf("idempotency keys %q %q %q: want one per request, the same on its replay", first.key, closed.key, replay.key)
	}
}

// TestKeepAliveTimeoutHonoured: a server that says `Keep-Alive: timeout=1`
// has its idle connection closed by the client before the second
// (keepAliveMargin: after 750 ms), and the next request goes out on a new
// connection, not replayed: the transport dropped the closed connection
// from its pool. Without the header, the same connection is reused.
func TestKeepAliveTimeoutHonoured(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ka    int
		reuse bool
	}{{"timeout=1", 1, false}, {"no header", -1, true}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClient(ClientOptions{Timeouts: Timeouts{Total: 5 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			srv := newIdleServer(t, 0, -1, tc.ka)
			if res, _ := probe(t, c, context.Background(), srv.url, Params{}); res.Outcome != ledger.OK {
				t.Fatalf("first request: %+v", res)
			}
			time.Sleep(1200 * time.Millisecond)
			res, rec := probe(t, c, context.Background(), srv.url, Params{})
			if res.Outcome != ledger.OK || rec.Replays != 0 {
				t.Fatalf("second request: %+v, replays %d; want ok, not replayed", res, rec.Replays)
			}
			seen := srv.requests()
			if reused := len(seen) == 2 && seen[1].conn == seen[0].conn; reused != tc.reuse {
				t.Errorf("second request reused the connection: %v, want %v (%+v)", reused, tc.reuse, seen)
			}
			if tc.reuse {
				return
			}
			select {
			case d := <-srv.clientIdle:
				// Generous bounds: closed after the margin, well before the server's 1 s.
				if d < 700*time.Millisecond || d > 1100*time.Millisecond {
					t.Errorf("client closed the idle connection %v after the response, want about 750ms", d)
				}
			default:
				t.Error("the client never closed the idle connection")
			}
		})
	}
}

// TestIdleConnTimeout: ClientOptions.IdleConnTimeout bounds an idle
// connection when the server says nothing.
func TestIdleConnTimeout(t *testing.T) {
	c, err := NewClient(ClientOptions{Timeouts: Timeouts{Total: 5 * time.Second}, IdleConnTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	srv := newIdleServer(t, 0, -1, -1)
	if res, _ := probe(t, c, context.Background(), srv.url, Params{}); res.Outcome != ledger.OK {
		t.Fatalf("request: %+v", res)
	}
	select {
	case d := <-srv.clientIdle:
		if d < 250*time.Millisecond {
			t.Errorf("idle connection closed after %v, before the 300ms timeout", d)
		}
	case <-time.After(3 * time.Second):
		t.Error("idle connection not closed within 3s of a 300ms idle timeout")
	}
	if _, err := NewClient(ClientOptions{IdleConnTimeout: -time.Second}); err == nil {
		t.Error("a negative idle timeout was accepted")
	}
}

func TestParseKeepAlive(t *testing.T) {
	for _, tt := range []struct {
		h    string
		want time.Duration
		ok   bool
	}{
		{"timeout=5, max=100", 5 * time.Second, true},
		{"max=100, timeout=1", time.Second, true},
		{" Timeout = 2 ", 2 * time.Second, true},
		{`timeout="3"`, 3 * time.Second, true},
		{"timeout=0", 0, true},
		{"", 0, false},
		{"max=100", 0, false},
		{"timeout=-1", 0, false},
		{"timeout=1.5", 0, false},
		{"timeout=abc", 0, false},
		{"timeout=3601", 0, false},
		{"timeout=99999999999999999999", 0, false},
	} {
		got, ok := parseKeepAlive(tt.h)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseKeepAlive(%q) = %v, %v; want %v, %v", tt.h, got, ok, tt.want, tt.ok)
		}
	}
	if got := keepAliveMargin(5 * time.Second); got != time.Second {
		t.Errorf("margin of 5s: %v, want 1s", got)
	}
}

// TestIdleConnExpiry: the idle timer closes a connection only when no
// request was written after the one it was armed for, and a write into an
// expired connection writes nothing.
func TestIdleConnExpiry(t *testing.T) {
	for _, tc := range []struct {
		name       string
		writeAfter bool // a request is written after the mark
		wantClosed bool
	}{{"idle", false, true}, {"taken again", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := net.Pipe()
			defer b.Close()
			go func() { _, _ = io.Copy(io.Discard, b) }()
			c := &idleConn{Conn: a}
			defer c.Close()
			m := c.nextUse()
			if _, err := c.Write([]byte("req")); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write([]byte("req, more")); err != nil {
				t.Fatal(err)
			}
			go func() { _, _ = b.Write([]byte("resp")) }()
			if _, err := c.Read(make([]byte, 4)); err != nil {
				t.Fatal(err)
			}
			if tc.writeAfter {
				if _, err := c.Write([]byte("next")); err != nil {
					t.Fatal(err)
				}
			}
			c.expireAfter(m, 10*time.Millisecond)
			time.Sleep(200 * time.Millisecond)
			n, err := c.Write([]byte("late"))
			if closed := errors.Is(err, errIdleExpired); closed != tc.wantClosed || closed && n != 0 {
				t.Errorf("write after the idle time: %d, %v; want expired %v", n, err, tc.wantClosed)
			}
		})
	}
}
