// Package h1 is a streaming HTTP/1.1 client transport for plain-HTTP
// origins: an http.RoundTripper whose requests are written and whose
// responses are read on the caller's goroutine, with a keep-alive pool.
//
// Go's net/http Transport keeps two goroutines on every connection (a
// reader and a writer) and a connection state with its own buffers and
// channels; for a prober holding thousands of streams open at once that
// is about 11 KiB a stream (8 KiB of goroutine stacks, descriptors, the
// write buffer and state), a third of what a stream in flight costs. Here
// a stream costs the caller's goroutine, the connection and its read
// buffer; the write buffer is pooled and lent for a request's write.
//
// What it does, as Go's transport does: keep-alive reuse (most recently
// used first) with an idle timeout, a bound on connections per host that
// requests wait for, a bound on response header bytes (informational 1xx
// responses included), httptrace's GotConn (Reused, WasIdle),
// GotFirstResponseByte, Got1xxResponse, WroteHeaders and WroteRequest, and
// the replay of a request whose reused connection failed before any
// response byte (when it has no body or a GetBody, and is idempotent or
// carries an Idempotency-Key). A response the server sends before it has
// read the whole request (RFC 9112 §9.5: a body-size limit's 413, then a
// close or a reset) is read as the request's response and ends the
// connection: a body over 64 KiB (or of unknown length) is written on a
// goroutine of its own, for the write only, while the caller watches the
// connection; a smaller one fits the socket buffers and is written first.
// A write that fails on the connection is a *WriteError holding the
// socket's error (ECONNRESET, EPIPE), which net/http's Request.Write
// hides in a type without Unwrap. What it does not do: TLS, proxies, HTTP/2,
// compression, 100-continue; callers route those requests to net/http.
// An idle connection that its server closed is found without a reader
// goroutine, by a non-blocking peek when it is taken (PeekClosed).
//
// Concurrency: a Transport is safe for concurrent use. A response body
// must be read by one goroutine; Close may be called from another at any
// time (it closes the connection). Cancelling the request's context closes
// the connection, which ends any read or write on it.
package h1
