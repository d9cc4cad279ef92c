package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"
)

// Options configure a Transport. Dial is required; the zero value of every
// other field means its default.
type Options struct {
	// Dial opens a connection ("tcp", "host:port"); its context bounds the
	// dial. The connection may wrap the socket: PeekClosed unwraps values
	// that have a NetConn() net.Conn method.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxConnsPerHost bounds the connections to one host:port, in use and
	// idle; a request waits for one to be free. 0: unbounded.
	MaxConnsPerHost int
	// IdleConnTimeout closes a connection left idle this long. 0: 90 s.
	IdleConnTimeout time.Duration
	// MaxResponseHeaderBytes bounds the bytes of a response's header
	// sections, informational (1xx) ones included. 0: 1 MiB.
	MaxResponseHeaderBytes int64
	// ReadBufferSize is a connection's read buffer (it holds headers and
	// chunk-size lines); WriteBufferSize the buffer a request is written
	// through, lent from a pool for the write only. 0: 4 KiB.
	ReadBufferSize, WriteBufferSize int
}

// Transport is an http.RoundTripper for plain-HTTP/1.1 origins (no TLS, no
// proxy) with a keep-alive pool. It is safe for concurrent use.
type Transport struct {
	opt   Options
	mu    sync.Mutex
	hosts map[string]*host
	wbufs sync.Pool // *bufio.Writer
}

// host is one host:port's pool.
type host struct {
	idle  []*conn       // most recently used last
	open  int           // connections open or being dialed
	freed chan struct{} // closed (and replaced) when a connection is freed or goes idle
}

// New returns a Transport with opt.
func New(opt Options) *Transport {
	if opt.IdleConnTimeout <= 0 {
		opt.IdleConnTimeout = 90 * time.Second
	}
	if opt.MaxResponseHeaderBytes <= 0 {
		opt.MaxResponseHeaderBytes = 1 << 20
	}
	if opt.ReadBufferSize <= 0 {
		opt.ReadBufferSize = 4 << 10
	}
	if opt.WriteBufferSize <= 0 {
		opt.WriteBufferSize = 4 << 10
	}
	t := &Transport{opt: opt, hosts: make(map[string]*host)}
	t.wbufs.New = func() any { return bufio.NewWriterSize(nil, opt.WriteBufferSize) }
	return t
}

// maxAttempts bounds the attempts of one request on reused connections
// that failed before a response byte (the caller's GetBody may refuse
// sooner).
const maxAttempts = 8

// RoundTrip sends req and returns its response once the response's
// headers are read; the body is read from the connection as the caller
// reads it. A request sent on a reused idle connection that fails before
// any response byte is sent again on another connection when it can be:
// no body, or a GetBody to rewind it (which may refuse: its error is
// returned), as Go's transport does. Its errors are the dial's, the
// connection's, ctx's, or malformed-response errors worded as net/http's.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, errors.New("h1: only http:// URLs with a host")
	}
	ctx := req.Context()
	trace := httptrace.ContextClientTrace(ctx)
	addr := hostPort(req.URL.Host)
	for attempt := 1; ; attempt++ {
		c, reused, idleFor, err := t.getConn(ctx, addr)
		if err != nil {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, err
		}
		if trace != nil && trace.GotConn != nil {
			trace.GotConn(httptrace.GotConnInfo{Conn: c.nc, Reused: reused, WasIdle: reused, IdleTime: idleFor})
		}
		resp, early, err := c.roundTrip(req, trace)
		if err == nil {
			return resp, nil
		}
		// A reused connection that failed before any response byte was
		// closed under the request by its server (a keep-alive race):
		// the request may go again.
		if !reused || !early || ctx.Err() != nil || attempt >= maxAttempts || !replayable(req) {
			return nil, err
		}
		next, rerr := Rewind(req)
		if rerr != nil {
			return nil, rerr
		}
		req = next
	}
}

// replayable reports whether req may be sent twice: an idempotent method,
// or an idempotency key the server can deduplicate by (Go's rule).
func replayable(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, key := req.Header["Idempotency-Key"]
	_, xkey := req.Header["X-Idempotency-Key"]
	return key || xkey
}

// Rewind returns req ready to be sent again: as it is without a body, with
// a fresh body from GetBody otherwise (both transports' replays use it).
func Rewind(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("request body cannot be rewound for a replay")
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	next := *req
	next.Body = body
	return &next, nil
}

// CloseIdleConnections closes the idle connections of every host.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	var idle []*conn
	for _, h := range t.hosts {
		for _, c := range h.idle {
			c.idleTimer.Stop()
			c.inIdle = false
		}
		idle = append(idle, h.idle...)
		h.idle = nil
	}
	t.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
}

// getConn returns an idle connection to addr that is still open (reused),
// or dials a new one, waiting while addr has MaxConnsPerHost open.
func (t *Transport) getConn(ctx context.Context, addr string) (c *conn, reused bool, idleFor time.Duration, err error) {
	for {
		t.mu.Lock()
		h := t.hosts[addr]
		if h == nil {
			h = &host{freed: make(chan struct{})}
			t.hosts[addr] = h
		}
		for n := len(h.idle); n > 0; n = len(h.idle) {
			c = h.idle[n-1]
			h.idle[n-1] = nil
			h.idle = h.idle[:n-1]
			c.inIdle = false
			c.idleTimer.Stop()
			t.mu.Unlock()
			if !PeekClosed(c.nc) {
				return c, true, time.Since(c.idleSince), nil
			}
			c.close()
			t.mu.Lock()
		}
		if t.opt.MaxConnsPerHost <= 0 || h.open < t.opt.MaxConnsPerHost {
			h.open++
			t.mu.Unlock()
			return t.dial(ctx, addr, h)
		}
		freed := h.freed
		t.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, false, 0, ctx.Err()
		}
	}
}

func (t *Transport) dial(ctx context.Context, addr string, h *host) (*conn, bool, time.Duration, error) {
	nc, err := t.opt.Dial(ctx, "tcp", addr)
	if err != nil {
		t.mu.Lock()
		h.open--
		h.signal()
		t.mu.Unlock()
		return nil, false, 0, err
	}
	c := &conn{t: t, h: h, nc: nc}
	c.lim = limitReader{r: nc}
	c.br = bufio.NewReaderSize(&c.lim, t.opt.ReadBufferSize)
	return c, false, 0, nil
}

// signal wakes the requests waiting for one of h's connections. Callers
// hold the Transport's lock.
func (h *host) signal() {
	close(h.freed)
	h.freed = make(chan struct{})
}

// hostPort is host with the HTTP port when it names none.
func hostPort(host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		return host + ":80"
	}
	return net.JoinHostPort(host, "80")
}

// errHeadersTooLarge is net/http's wording, which callers may match.
func errHeadersTooLarge(n int64) error {
	return fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", n)
}

// limitReader counts the bytes read through it while n > 0 and fails
// once they pass it: the connection's reader during a response's headers.
type limitReader struct {
	r        io.Reader
	n        int64 // bytes left; < 0: no limit
	exceeded bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return l.r.Read(p)
	}
	if l.n == 0 {
		l.exceeded = true
		return 0, errors.New("h1: response headers too large")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}
