package testutil

import (
	"net"
	"net/netip"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RawServer is a TCP server on 127.0.0.1 for tests whose server must write
// HTTP by hand, on the raw connection: a status line, headers or framing
// net/http would refuse to send, a connection closed or reset at a chosen
// byte, a keep-alive that ends early. It accepts connections and serves
// each in its own goroutine until the test ends; it can also go down
// (connections refused) and come back up on the same port.
type RawServer struct {
	addr  string
	serve func(*RawConn)
	stop  chan struct{}

	mu       sync.Mutex
	ln       net.Listener
	conns    map[net.Conn]struct{}
	accepted int
	down     bool
	// reserve holds the port while the server is down: bound, not
	// listening, so connections are refused and no other socket takes it.
	reserve int

	wg sync.WaitGroup
}

// RawConn is one accepted connection.
type RawConn struct {
	net.Conn
	// Index is the connection's place in accept order, from 0.
	Index int
	// Stop is closed when the server closes (the test ends): a serve that
	// holds the connection must then return.
	Stop <-chan struct{}
}

// NewRawServer starts a server on a free 127.0.0.1 port that calls serve
// on every connection it accepts; when serve returns the connection is
// closed. At the end of the test the server closes its listener and every
// connection, closes Stop and waits for every serve to return.
func NewRawServer(t testing.TB, serve func(c *RawConn)) *RawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("raw server: %v", err)
	}
	s := &RawServer{addr: ln.Addr().String(), serve: serve, stop: make(chan struct{}), ln: ln, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept(ln)
	t.Cleanup(s.close)
	return s
}

// Addr is the server's address, 127.0.0.1:port.
func (s *RawServer) Addr() string { return s.addr }

// URL is http://127.0.0.1:port.
func (s *RawServer) URL() string { return "http://" + s.addr }

// Down closes the listener and every connection: the port refuses
// connections until Up listens on it again.
func (s *RawServer) Down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return
	}
	s.down = true
	_ = s.ln.Close()
	for c := range s.conns {
		_ = c.Close()
	}
	s.reserve = reservePort(s.addr)
}

// Up listens on the same port again after Down.
func (s *RawServer) Up(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.down {
		return
	}
	var ln net.Listener
	var err error
	for range 50 { // the port was ours a moment ago; retry briefly
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("raw server: listening on %s again: %v", s.addr, err)
	}
	s.ln, s.down = ln, false
	if s.reserve > 0 {
		_ = syscall.Close(s.reserve)
		s.reserve = 0
	}
	s.wg.Add(1)
	go s.accept(ln)
}

// reservePort binds addr without listening (SO_REUSEADDR, so that a
// listener can take it back); -1 when it cannot.
func reservePort(addr string) int {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return -1
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return -1
	}
	if syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1) != nil ||
		syscall.Bind(fd, &syscall.SockaddrInet4{Addr: ap.Addr().As4(), Port: int(ap.Port())}) != nil {
		_ = syscall.Close(fd)
		return -1
	}
	return fd
}

func (s *RawServer) close() {
	s.mu.Lock()
	if s.reserve > 0 {
		_ = syscall.Close(s.reserve)
		s.reserve = 0
	}
	close(s.stop)
	s.down = true
	_ = s.ln.Close()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *RawServer) accept(ln net.Listener) {
	defer s.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.down {
			s.mu.Unlock()
			_ = c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		rc := &RawConn{Conn: c, Index: s.accepted, Stop: s.stop}
		s.accepted++
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(rc)
	}
}

func (s *RawServer) serveConn(c *RawConn) {
	defer s.wg.Done()
	defer func() {
		_ = c.Close()
		s.mu.Lock()
		delete(s.conns, c.Conn)
		s.mu.Unlock()
	}()
	s.serve(c)
}
