package protocol

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Idle keep-alive connections. Servers close a connection left idle for
// their keep-alive timeout (llama.cpp's cpp-httplib and vLLM's uvicorn:
// 5 s); a request written into a connection the server is closing fails
// before any response byte. The client therefore keeps an idle connection
// for less than the server does: ClientOptions.IdleConnTimeout (the
// transport's own idle timer, DefaultIdleConnTimeout) bounds every idle
// connection, and a server's `Keep-Alive: timeout=N` response header bounds
// that connection's idleness to N minus a margin (keepAliveMargin), closed
// by the connection's own timer (idleConn). Go's transport has a reader on
// every idle connection that sees the close and drops it from the pool; the
// streaming transport (h1) peeks at the socket when it takes one.

// DefaultIdleConnTimeout is how long an idle keep-alive connection is kept
// when ClientOptions.IdleConnTimeout is 0: below the 5 s that llama.cpp and
// uvicorn (vLLM) close idle connections after.
const DefaultIdleConnTimeout = 4 * time.Second

// maxKeepAliveTimeout is the largest Keep-Alive timeout taken from a
// server; a larger one is left to the configured idle timeout.
const maxKeepAliveTimeout = time.Hour

// keepAliveMargin is how much sooner than a server's advertised keep-alive
// timeout n an idle connection is closed: a quarter of n, at most a second
// (n = 5 s: closed after 4 s idle; n = 1 s: after 750 ms). It covers the
// delay between the server's last write, from which its timer runs, and the
// end of the client's read, from which the client's does.
func keepAliveMargin(n time.Duration) time.Duration { return min(n/4, time.Second) }

// parseKeepAlive returns the timeout of a Keep-Alive response header
// ("timeout=5, max=100"), and whether it holds a believable one: whole
// seconds, 0 to an hour. Anything else is ignored (the configured idle
// timeout applies).
func parseKeepAlive(h string) (time.Duration, bool) {
	if len(h) > 256 {
		return 0, false
	}
	for p := range strings.SplitSeq(h, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "timeout") {
			continue
		}
		n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(v), `"`))
		if err != nil || n < 0 || time.Duration(n)*time.Second > maxKeepAliveTimeout {
			return 0, false
		}
		return time.Duration(n) * time.Second, true
	}
	return 0, false
}

// errIdleExpired is what a write into a connection its idle timer closed
// returns. Nothing was written, so the transport sends the request again
// on another connection (its body is rewindable).
var errIdleExpired = fmt.Errorf("protocol: idle keep-alive connection expired: %w", net.ErrClosed)

// idleConn is a dialed connection that can close itself after being idle
// for a server's keep-alive timeout. It counts its uses: an HTTP/1 request
// is written, then its response read, so a write that follows reads (or
// the first write) starts a use. A use stops the idle timer; expireAfter
// arms it for the use a response ended, unless another use began since.
type idleConn struct {
	net.Conn
	mu      sync.Mutex
	uses    uint64
	writing bool
	timer   *time.Timer
	expired bool
}

func (c *idleConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	if c.expired {
		c.mu.Unlock()
		return 0, errIdleExpired
	}
	if !c.writing {
		c.uses++
		c.writing = true
	}
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *idleConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	c.writing = false
	c.mu.Unlock()
	return c.Conn.Read(b)
}

// nextUse is the number the next use of the connection will have: taken
// when a request is given the connection, before it is written.
func (c *idleConn) nextUse() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.uses + 1
}

// expireAfter closes the connection once it has been idle for d, unless it
// is written to first; nothing is armed when its use is no longer use
// (another request took it meanwhile) or it has expired already.
func (c *idleConn) expireAfter(use uint64, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.uses != use || c.expired {
		return
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	c.timer = time.AfterFunc(d, func() {
		c.mu.Lock()
		if c.uses != use || c.expired {
			c.mu.Unlock()
			return
		}
		c.expired = true
		c.mu.Unlock()
		_ = c.Conn.Close()
	})
}

// NetConn returns the connection under c (for h1.PeekClosed).
func (c *idleConn) NetConn() net.Conn { return c.Conn }

// Close stops the idle timer and closes the connection.
func (c *idleConn) Close() error {
	c.mu.Lock()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.mu.Unlock()
	return c.Conn.Close()
}

// dialIdle wraps a dial function so that every connection it makes is an
// *idleConn.
func dialIdle(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &idleConn{Conn: conn}, nil
	}
}

// asIdleConn finds the *idleConn under a connection the transport hands to
// httptrace (a TLS connection wraps it); nil when there is none (a proxy's
// CONNECT tunnel is still one: the dial is the same).
func asIdleConn(c net.Conn) *idleConn {
	for range 4 {
		switch v := c.(type) {
		case *idleConn:
			return v
		case *tls.Conn:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}
