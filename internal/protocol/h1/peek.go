package h1

import (
	"net"
	"syscall"
)

// PeekClosed reports whether an idle connection can no longer carry a
// request: its peer closed or reset it, or sent bytes nobody asked for
// (an HTTP/1.1 server may send a 408 before closing an idle connection).
// It looks without reading or waiting (a non-blocking peek at the socket,
// where the platform has one: see peekSocket), so taking an idle
// connection costs one system call. Go's own transport learns the same
// from a reader goroutine it keeps on every connection; this transport
// keeps none. A connection it cannot look into is reported open: a
// request on it that fails before a response byte is sent again.
func PeekClosed(nc net.Conn) bool {
	for range 4 {
		u, ok := nc.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		nc = u.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	closed := false
	if err := rc.Read(func(fd uintptr) bool {
		closed = peekSocket(fd)
		return true // never wait for readability
	}); err != nil {
		return true // closed locally
	}
	return closed
}
