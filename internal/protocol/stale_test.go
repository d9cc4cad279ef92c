package protocol

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// starvedDelay is how late, after the request was written, the close of a
// reused connection is seen in these tests: what a prober starved of CPU
// (busy loops, -race, a throttled cgroup) sees of a close that came at
// once. It is more than the 250 ms wall-clock window the replay gate had
// before, which blamed the target for such a close.
const starvedDelay = 750 * time.Millisecond

// TestStaleConnectionOnStarvedHost: a request on a reused keep-alive
// connection that closes (FIN) or resets (RST) before any response byte is
// the prober's stale connection however late the prober sees the close:
// replayed on a new connection, ok, the replay on its record. The server
// holds the close starvedDelay after reading the request, as a starved
// prober would see it; the old wall-clock gate ended it
// transport_error/connection_reset, not replayed.
func TestStaleConnectionOnStarvedHost(t *testing.T) {
	for _, reset := range []bool{false, true} {
		t.Run(fmt.Sprintf("reset=%v", reset), func(t *testing.T) {
			c := newClient(t, ClientOptions{Timeouts: Timeouts{Total: 10 * time.Second}})
			srv := closingServer(t, 1, reset, starvedDelay)
			if res, _ := probe(t, c, context.Background(), srv, Params{}); res.Outcome != ledger.OK {
				t.Fatalf("first request: %+v, want ok", res)
			}
			res, rec := probe(t, c, context.Background(), srv, Params{})
			if res.Outcome != ledger.OK || rec.Replays != 1 || rec.ReplayReason != ledger.ReasonStaleConnection {
				t.Errorf("reused connection closed %v after the write: %+v (replays %d %q), want ok, replayed once (stale_connection)",
					starvedDelay, res, rec.Replays, rec.ReplayReason)
			}
			if rec.Replayed <= rec.Dispatched {
				t.Errorf("replayed at %v, dispatched at %v: the replay is after the dispatch", rec.Replayed, rec.Dispatched)
			}
		})
	}
}

// TestDyingTargetJudgedByReplay: a target that takes a request and dies
// before any response byte is told from a keep-alive race by the replay,
// never by a clock: the request met on a reused connection is replayed, the
// replay takes a fresh connection (the pool is empty), and the failure
// there is the target's: transport_error/connection_reset, the replay on
// the record.
func TestDyingTargetJudgedByReplay(t *testing.T) {
	for _, reset := range []bool{false, true} {
		t.Run(fmt.Sprintf("reset=%v", reset), func(t *testing.T) {
			c := newClient(t, ClientOptions{Timeouts: Timeouts{Total: 10 * time.Second}})
			srv, seen := dyingServer(t, reset, starvedDelay)
			if res, _ := probe(t, c, context.Background(), srv, Params{}); res.Outcome != ledger.OK {
				t.Fatalf("first request: %+v, want ok", res)
			}
			res, rec := probe(t, c, context.Background(), srv, Params{})
			if res.Outcome != ledger.TransportError || res.Reason != ledger.ReasonConnectionReset || rec.Replays != 1 || rec.Headers != 0 {
				t.Errorf("dying target: %+v (replays %d, headers %v), want transport_error/connection_reset after one replay", res, rec.Replays, rec.Headers)
			}
			if got := seen.Load(); got != 3 {
				t.Errorf("the server saw %d requests, want 3 (the first, the second and its replay)", got)
			}
		})
	}
}

// dyingServer answers the first request it reads and no other: every later
// request is read, held for wait and its connection closed (reset: with an
// RST) without a response byte. seen counts the requests read.
func dyingServer(t *testing.T, reset bool, wait time.Duration) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	body := "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	var seen atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					if seen.Add(1) > 1 {
						time.Sleep(wait)
						if reset {
							_ = conn.(*net.TCPConn).SetLinger(0)
						}
						return
					}
					fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String(), &seen
}
