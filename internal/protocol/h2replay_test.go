package protocol

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestReplayH2KeepAliveRace: an HTTP/2 server that closes an idle
// connection as the next request arrives on it, with no GOAWAY the client
// reads (nginx at its keepalive_timeout: it closes with the request
// unread, a reset that loses its GOAWAY; TestProxyIdleTimeout in
// test/proxy met it), fails that request with the connection's error
// before any response byte. Go's HTTP/2 transport replays only on a
// GOAWAY or a refused stream; before the router replayed this race, the
// request ended transport_error (stale_connection, or transport_other for
// a stream that was not the connection's first). Now it is replayed on a
// new connection: ok, its replay on its record (stale_connection), for
// every stream of a burst on the connection (a stream that starts once the
// connection is known lost takes a new one, not replayed).
func TestReplayH2KeepAliveRace(t *testing.T) {
	for _, reset := range []bool{true, false} {
		t.Run(fmt.Sprintf("reset=%v", reset), func(t *testing.T) {
			srv := httptest.NewUnstartedServer(streamHandler(content("a"), done))
			srv.EnableHTTP2 = true
			srv.Config.ErrorLog = log.New(io.Discard, "", 0)
			ln := &raceListener{Listener: srv.Listener, reset: reset}
			srv.Listener = ln
			srv.StartTLS()
			defer srv.Close()
			c := newClient(t, ClientOptions{TLS: TLSOptions{InsecureSkipVerify: true}, Timeouts: Timeouts{Total: 10 * time.Second}})
			if res, rec := probe(t, c, context.Background(), srv.URL+"/v1", Params{}); res.Outcome != ledger.OK || rec.Conn == nil || rec.Conn.HTTPVersion != "2" {
				t.Fatalf("first request: %+v (conn %+v), want ok over HTTP/2", res, rec.Conn)
			}
			time.Sleep(50 * time.Millisecond) // the first response's frames all read
			ln.arm()
			// A burst on the one connection: every stream meets the close,
			// at whatever point of its write.
			var wg sync.WaitGroup
			var replayed atomic.Int32
			for range h2RaceBurst {
				wg.Go(func() {
					res, rec := probe(t, c, context.Background(), srv.URL+"/v1", Params{})
					replayed.Add(int32(rec.Replays))
					if res.Outcome != ledger.OK || rec.Replays > 1 || (rec.Replays == 1 && (rec.ReplayReason != ledger.ReasonStaleConnection || rec.Replayed <= rec.Dispatched)) {
						t.Errorf("HTTP/2 connection closed as the request came: %+v (replays %d %q at %v, dispatched %v), want ok, replayed at most once (stale_connection)",
							res, rec.Replays, rec.ReplayReason, rec.Replayed, rec.Dispatched)
					}
				})
			}
			wg.Wait()
			if replayed.Load() == 0 {
				t.Error("no request of the burst was replayed: none met the close")
			}
			if !ln.raced() {
				t.Fatal("the server's first connection never met the requests")
			}
		})
	}
}

// h2RaceBurst is how many requests meet the close at once.
const h2RaceBurst = 4

// raceListener closes its first connection (with a reset, or a FIN) on
// the first bytes read from it once armed, before the server reads them.
type raceListener struct {
	net.Listener
	reset bool
	once  sync.Once
	first *raceConn
	hit   atomic.Bool
}

func (l *raceListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	var out net.Conn = c
	l.once.Do(func() {
		l.first = &raceConn{Conn: c, l: l}
		out = l.first
	})
	return out, nil
}

func (l *raceListener) arm()        { l.first.armed.Store(true) }
func (l *raceListener) raced() bool { return l.hit.Load() }

type raceConn struct {
	net.Conn
	l     *raceListener
	armed atomic.Bool
}

func (c *raceConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.armed.Load() {
		c.l.hit.Store(true)
		if tc, ok := c.Conn.(*net.TCPConn); ok && c.l.reset {
			_ = tc.SetLinger(0)
		}
		_ = c.Conn.Close()
		return 0, net.ErrClosed
	}
	return n, err
}
