package h1

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
	"sync"
	"time"
)

// conn is one connection to a host. Between requests it lies in its
// host's idle list; during one it belongs to that request alone.
type conn struct {
	t  *Transport
	h  *host
	nc net.Conn
	br *bufio.Reader // over lim
	// lim bounds the header bytes read; it is set before a response's
	// headers and lifted after them.
	lim limitReader

	// Guarded by t.mu.
	inIdle    bool
	idleSince time.Time
	idleTimer *time.Timer

	closeOnce sync.Once
}

// roundTrip writes req and reads its response's headers. early reports a
// failure before any byte of the response, the case in which a request on
// a reused connection may be sent again. On error the connection is
// closed; on success the response's body owns it.
func (c *conn) roundTrip(req *http.Request, trace *httptrace.ClientTrace) (resp *http.Response, early bool, err error) {
	// A context that ends closes the connection: any read or write on it
	// returns at once. Stopped when the response's body is done.
	stop := context.AfterFunc(req.Context(), func() { _ = c.nc.Close() })
	fail := func(early bool, err error) (*http.Response, bool, error) {
		stop()
		c.close()
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, early, ctxErr
		}
		return nil, early, err
	}
	earlyResp, err := c.sendRequest(req)
	if err != nil {
		// No response byte: the request failed before its response (the
		// case a reused connection's request may be sent again in).
		return fail(true, err)
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	for {
		resp, err = http.ReadResponse(c.br, req)
		if err != nil {
			if c.lim.exceeded {
				err = errHeadersTooLarge(c.t.opt.MaxResponseHeaderBytes)
			}
			return fail(false, err)
		}
		// Informational responses precede the final one, within the same
		// header budget (an endless run of them fails on it); a 101 is
		// final: the connection has left HTTP.
		if resp.StatusCode >= 100 && resp.StatusCode <= 199 && resp.StatusCode != http.StatusSwitchingProtocols {
			if trace != nil && trace.Got1xxResponse != nil {
				if err := trace.Got1xxResponse(resp.StatusCode, textproto.MIMEHeader(resp.Header)); err != nil {
					return fail(false, err)
				}
			}
			continue
		}
		break
	}
	c.lim.n = -1
	// A response that came before the request was written whole ends
	// the connection: the rest of the request is abandoned with it.
	b := &body{c: c, rc: resp.Body, stop: stop, reusable: !earlyResp && reusable(req, resp)}
	resp.Close = resp.Close || earlyResp
	resp.Body = b
	if resp.StatusCode == http.StatusSwitchingProtocols || b.rc == http.NoBody {
		// Nothing to read: the connection is done with now.
		b.finish(resp.StatusCode != http.StatusSwitchingProtocols)
		resp.Body = http.NoBody
	}
	return resp, false, nil
}

// reusable reports whether the connection can carry another request once
// resp's body has been read to its end: both sides keep it alive and the
// body's end is framed (a length or chunking), not the connection's close.
// resp.Close is net/http's reading of Connection and the version (an
// HTTP/1.0 response without keep-alive closes).
func reusable(req *http.Request, resp *http.Response) bool {
	if req.Close || resp.Close || resp.ProtoMajor != 1 {
		return false
	}
	if resp.ContentLength >= 0 || resp.Body == http.NoBody {
		return true
	}
	for _, te := range resp.TransferEncoding {
		if strings.EqualFold(te, "chunked") {
			return true
		}
	}
	return false
}

// release returns the connection to its host's idle list, armed to close
// after IdleConnTimeout.
func (c *conn) release() {
	t := c.t
	t.mu.Lock()
	defer t.mu.Unlock()
	c.inIdle, c.idleSince = true, time.Now()
	c.h.idle = append(c.h.idle, c)
	if c.idleTimer == nil {
		c.idleTimer = time.AfterFunc(t.opt.IdleConnTimeout, c.expire)
	} else {
		c.idleTimer.Reset(t.opt.IdleConnTimeout)
	}
	c.h.signal()
}

// expire closes the connection if it is still idle, and has been for
// IdleConnTimeout (a firing that waited for the lock while the connection
// was taken and released again is not its current idleness's).
func (c *conn) expire() {
	t := c.t
	t.mu.Lock()
	if !c.inIdle || time.Since(c.idleSince) < t.opt.IdleConnTimeout {
		t.mu.Unlock()
		return
	}
	for i, ic := range c.h.idle {
		if ic == c {
			c.h.idle = append(c.h.idle[:i], c.h.idle[i+1:]...)
			break
		}
	}
	c.inIdle = false
	t.mu.Unlock()
	c.close()
}

// close closes the connection and frees its place in its host's count,
// once.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		_ = c.nc.Close()
		t := c.t
		t.mu.Lock()
		c.h.open--
		c.h.signal()
		t.mu.Unlock()
	})
}

// errBodyClosed is what a read after Close returns.
var errBodyClosed = errors.New("http: read on closed response body")

// body is a response's body. It reads on the caller's goroutine, straight
// from the connection; at its end the connection goes back to the pool
// (when reusable), on Close before the end it is closed. Close may be
// called concurrently with Read: it closes the connection, which ends the
// read.
type body struct {
	c        *conn
	rc       io.ReadCloser // net/http's framing reader over c.br
	stop     func() bool   // stops closing c when the request's context ends
	reusable bool

	mu     sync.Mutex
	done   bool // the connection was released or closed
	closed bool // Close was called
}

func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	done, closed := b.done, b.closed
	b.mu.Unlock()
	switch {
	case closed:
		return 0, errBodyClosed
	case done:
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.finish(b.reusable)
	}
	return n, err
}

// Close ends the body: a connection whose body was not read to its end is
// closed (the rest of the body is not drained).
func (b *body) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.finish(false)
	return nil
}

// finish releases (keep) or closes the connection, once. A connection
// with bytes buffered past the response (unsolicited: a second response
// nobody asked for) is closed, never pooled, or the next request would
// read them as its own response. Only a keep caller reads the buffer:
// Close (keep false) may run while Read is in the buffer.
func (b *body) finish(keep bool) {
	b.mu.Lock()
	if b.done {
		b.mu.Unlock()
		return
	}
	b.done = true
	b.mu.Unlock()
	// stop is false when the request's context ended and is closing the
	// connection: it cannot be kept.
	if b.stop() && keep && b.c.br.Buffered() == 0 {
		b.c.release()
		return
	}
	b.c.close()
}
