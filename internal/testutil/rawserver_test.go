package testutil

import (
	"bufio"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRawServer: each connection is served with its accept index and what
// the serve writes reaches the client as written; Down refuses
// connections, Up serves again on the same address; at the end of the
// test a serve that holds its connection is released by Stop.
func TestRawServer(t *testing.T) {
	var released sync.WaitGroup
	var s *RawServer
	t.Run("serve", func(t *testing.T) {
		s = NewRawServer(t, func(c *RawConn) {
			released.Add(1)
			defer released.Done()
			line, _ := bufio.NewReader(c).ReadString('\n')
			_, _ = io.WriteString(c, strings.TrimSpace(line)+" #"+string(rune('0'+c.Index))+"\n")
			<-c.Stop
		})
		for i, want := range []string{"a #0", "b #1"} {
			if got := roundTrip(t, s.Addr(), string(rune('a'+i))); got != want {
				t.Errorf("connection %d: got %q, want %q", i, got, want)
			}
		}
		s.Down()
		if c, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
			c.Close()
			t.Errorf("down: a connection to %s was accepted", s.Addr())
		}
		s.Up(t)
		if got := roundTrip(t, s.Addr(), "c"); got != "c #2" {
			t.Errorf("up again: got %q, want \"c #2\"", got)
		}
	}) // its cleanup closes Stop: every serve returns
	done := make(chan struct{})
	go func() { released.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a serve holding its connection did not return when the test ended")
	}
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %q", s.URL())
	}
}

// roundTrip sends line on a new connection and returns the answer line.
func roundTrip(t *testing.T, addr, line string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", line, err)
	}
	return strings.TrimSpace(got)
}
