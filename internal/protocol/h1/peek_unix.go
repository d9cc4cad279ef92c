//go:build linux || darwin || freebsd || netbsd || openbsd

package h1

import "syscall"

// peekSocket peeks one byte without waiting: no data yet (EAGAIN) is an
// open connection; end of stream, an error or unsolicited bytes a closed
// one.
func peekSocket(fd uintptr) bool {
	var b [1]byte
	for {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		// A byte (unsolicited), the end of the stream (0 bytes) or an
		// error: the connection cannot carry a request.
		return true
	}
}
