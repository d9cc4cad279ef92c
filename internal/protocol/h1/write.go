package h1

import (
	"bufio"
	"errors"
	"net"
	"net/http"
)

// inlineBodyBytes is the largest request body written on the caller's
// goroutine before the response is read. A body this small fits the
// socket's buffers on both sides, so its write never waits for the
// server to read; a larger one (or one of unknown length) is written on a
// goroutine of its own while the caller watches the connection for an
// early response (RFC 9112 §9.5: a server may answer, e.g. 413, before it
// reads the body, and stop reading it). The goroutine lives for the write
// only, never for the stream.
const inlineBodyBytes = 64 << 10

// WriteError is the failure of a request's write on the connection: the
// socket's own error (a reset, a broken pipe), unwrapped from net/http's
// requestBodyReadError, which has no Unwrap and hides it (Go's transport
// unwraps it too). A failure to read the caller's body is not one: it is
// returned as Request.Write returns it.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return "h1: writing the request: " + e.Err.Error() }

// Unwrap returns the socket's error.
func (e *WriteError) Unwrap() error { return e.Err }

// connWriter keeps the first error of the connection's writes.
type connWriter struct {
	nc  net.Conn
	err error
}

func (w *connWriter) Write(p []byte) (int, error) {
	n, err := w.nc.Write(p)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}

// write writes req through a pooled buffer. net/http's Request.Write
// writes what Go's transport writes (it adds a User-Agent when there is
// none, and Content-Length or chunking), and calls httptrace's
// WroteHeaders and WroteRequest. A failure of the connection is a
// *WriteError.
func (c *conn) write(req *http.Request) error {
	cw := connWriter{nc: c.nc}
	bw := c.t.wbufs.Get().(*bufio.Writer)
	bw.Reset(&cw)
	err := req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	c.t.wbufs.Put(bw)
	if err != nil && cw.err != nil {
		return &WriteError{Err: cw.err}
	}
	return err
}

// writeInline reports whether req's body is small enough to be written
// before its response is read (inlineBodyBytes).
func writeInline(req *http.Request) bool {
	if req.Body == nil || req.Body == http.NoBody {
		return true
	}
	// A body with ContentLength 0 is of unknown length (net/http sends it
	// chunked).
	return req.ContentLength > 0 && req.ContentLength <= inlineBodyBytes
}

// sendRequest writes req and waits for the first byte of its response.
// It returns early when the response began before the request was
// written whole (the connection then cannot be reused: the rest of the
// request is abandoned with it), and the write's error when the
// connection failed without any response byte. A write that failed on
// the connection does not end the request by itself: a response the
// server sent before it closed (413 and close, FIN then RST) is read.
func (c *conn) sendRequest(req *http.Request) (early bool, err error) {
	if writeInline(req) {
		werr := c.write(req)
		var we *WriteError
		if werr != nil && !errors.As(werr, &we) {
			return false, werr // the caller's body failed: the connection is sound, no response is due
		}
		return werr != nil, c.firstByte(werr)
	}
	done := make(chan error, 1)
	go func() {
		err := c.write(req)
		var we *WriteError
		if err != nil && !errors.As(err, &we) {
			// The caller's body failed: no response is due, so the
			// connection is closed to end the wait for one.
			_ = c.nc.Close()
		}
		done <- err
	}()
	perr := c.peek()
	select {
	case werr := <-done:
		return werr != nil, c.pick(werr, perr)
	default:
	}
	if perr != nil {
		// The connection failed under the write: end the write before
		// returning (the caller may reuse the request's body). The write
		// then fails on the close, not on the server: the read's failure
		// is what the server did.
		_ = c.nc.Close()
		if werr := <-done; werr != nil && !errors.Is(werr, net.ErrClosed) {
			return false, werr
		}
		return false, &WriteError{Err: perr}
	}
	// A response before the request's end: read it; closing the
	// connection ends the write.
	return true, nil
}

// firstByte waits for the response's first byte after a write that
// ended with werr (nil: written whole).
func (c *conn) firstByte(werr error) error {
	return c.pick(werr, c.peek())
}

// peek waits for a response byte, under the header bound.
func (c *conn) peek() error {
	c.lim.n, c.lim.exceeded = c.t.opt.MaxResponseHeaderBytes, false
	_, err := c.br.Peek(1) // the bound (> 0) cannot be passed by a first read
	return err
}

// pick is the request's error when no response byte came (perr): the
// write's failure first (a reset or broken pipe while writing is what
// ended it), then the read's. nil when a byte came.
func (c *conn) pick(werr, perr error) error {
	switch {
	case perr == nil && c.br.Buffered() > 0:
		return nil
	case werr != nil:
		return werr
	}
	return perr
}
