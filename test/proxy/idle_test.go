package proxy

import (
	"context"
	"fmt"
	"net/http/httptrace"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
)

// proxyIdle is nginx's keepalive_timeout in this test; with the header
// variant nginx also says `Keep-Alive: timeout=1` on HTTP/1.1 responses,
// and the prober retires such a connection after 750 ms idle
// (protocol's keepAliveMargin).
const (
	proxyIdle    = time.Second
	proxyRetired = 750 * time.Millisecond
)

// idleOffsets are the idle gaps of the rounds, relative to proxyIdle:
// swept from 0.8 to 1.2 times it, densest at the timeout itself.
var idleOffsets = func() []time.Duration {
	var offs []time.Duration
	for _, ms := range []time.Duration{-200, -100, -50, -20, -10, -5} {
		offs = append(offs, ms*time.Millisecond)
	}
	for d := -2 * time.Millisecond; d <= 4*time.Millisecond; d += 500 * time.Microsecond {
		offs = append(offs, d)
	}
	for _, ms := range []time.Duration{5, 10, 20, 50, 100, 200} {
		offs = append(offs, ms*time.Millisecond)
	}
	return offs
}()

// idleBurst is how many requests a round sends at once: as many pooled
// connections meet nginx's timeout each round (HTTP/2: one connection).
const idleBurst = 4

// TestProxyIdleTimeout drives the prober through nginx with a 1 s
// keepalive_timeout to the client, without and with its Keep-Alive
// header, over plain HTTP/1.1 (the streaming transport), TLS HTTP/1.1 and
// TLS HTTP/2 (net/http): rounds of idleBurst requests, each round sent an
// idle gap after the last one ended, the gaps swept across the timeout
// (idleOffsets). The proxy closes idle connections while the prober may be
// taking them from its pool. No request may be lost to that race: every
// one ends ok (nginx and the simulator never fail here), a replay is
// recorded on its record with reason stale_connection. With the header,
// the prober retires its HTTP/1.1 connections before nginx does: no
// request takes a pooled connection idle past proxyRetired, none is
// replayed, unless the host was starved (a round's gap overshot by more
// than hostSlack: the prober's timers ran late), which is reported, not
// asserted.
func TestProxyIdleTimeout(t *testing.T) {
	requireNginx(t)
	up := startSim(t, simTTFT)
	type variant struct {
		name   string
		header bool
		h1     bool
		c      *protocol.Client
		base   string
		st     idleStats
	}
	var vs []*variant
	for _, hdr := range []bool{false, true} {
		cfg := proxyConfig{Upstream: up, KeepAlive: proxyIdle}
		name := "no Keep-Alive header"
		if hdr {
			cfg.KeepAliveHdr, name = proxyIdle, "Keep-Alive timeout=1"
		}
		n := startNginx(t, cfg)
		vs = append(vs,
			&variant{name: name + "/plain HTTP/1.1", header: hdr, h1: true, c: client(t, n.cfg.CAFile, true), base: n.PlainURL()},
			&variant{name: name + "/TLS HTTP/1.1", header: hdr, h1: true, c: client(t, n.cfg.CAFile, true), base: n.TLSURL()},
			&variant{name: name + "/TLS HTTP/2", header: hdr, c: client(t, n.cfg.CAFile, false), base: n.TLSURL()})
	}
	// All at once (t.Parallel would run GOMAXPROCS of them at a time): the
	// run takes the rounds' time once, about 30 s.
	var wg sync.WaitGroup
	for _, v := range vs {
		wg.Go(func() { v.st = idleRounds(t, v.c, v.base) })
	}
	wg.Wait()
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			st := v.st
			t.Logf("%s", st)
			sampled := false
			for _, r := range st.recs {
				if r.Outcome != ledger.OK {
					t.Errorf("request %d lost: %s/%s %q (replays %d)", r.ID, r.Outcome, r.Reason, r.Error, r.Replays)
				}
				if r.Replays > 0 {
					t.Logf("request %d replayed %d times (its first connection pooled and idle %v)", r.ID, r.Replays, st.idle[r])
					if !sampled {
						sampled = true
						t.Logf("a replayed record: %s", recordJSON(t, r))
					}
				}
				if r.Replays > 0 && (r.ReplayReason != ledger.ReasonStaleConnection || r.Replayed <= r.Dispatched) {
					t.Errorf("request %d replayed %d times: reason %q at %v (dispatched %v)", r.ID, r.Replays, r.ReplayReason, r.Replayed, r.Dispatched)
				}
			}
			if !v.header || !v.h1 {
				return // HTTP/2 carries no Keep-Alive header
			}
			if st.overshoot > hostSlack {
				t.Logf("invalid with a host cause: a gap overshot by %v (> %v): the prober's idle timers may have run late", st.overshoot, hostSlack)
				return
			}
			if st.pooledLate > 0 || st.replays > 0 {
				t.Errorf("with Keep-Alive: timeout=1, %d requests took a connection idle past %v and %d were replayed: the prober did not retire its idle connections first",
					st.pooledLate, proxyRetired+hostSlack, st.replays)
			}
		})
	}
}

// hostSlack is how late a timer may run on a busy host before a run's
// timing is the host's.
const hostSlack = 100 * time.Millisecond

// idleStats is what a run of rounds met.
type idleStats struct {
	recs       []*ledger.Record
	firsts     int                              // first attempts after an idle gap (all rounds but the first)
	pooled     int                              // of them, on a pooled connection
	edge       int                              // first attempts on a pooled connection idle within ±5 ms of proxyIdle
	pastIdle   int                              // first attempts on a pooled connection idle proxyIdle or more
	pooledLate int                              // first attempts on a pooled connection idle past proxyRetired+hostSlack
	idle       map[*ledger.Record]time.Duration // a first attempt's pooled connection's idle time
	replays    int                              // replays recorded, over all records
	replayed   int                              // records replayed
	overshoot  time.Duration                    // the largest gap's overshoot of its plan
}

func (s idleStats) String() string {
	lost := 0
	for _, r := range s.recs {
		if r.Outcome != ledger.OK {
			lost++
		}
	}
	return fmt.Sprintf("%d requests (%d after an idle gap: %d on a pooled connection, %d of them idle within ±5 ms of nginx's %v, %d idle %v or more), %d replayed (%d replays), %d lost; gaps overshot by up to %v",
		len(s.recs), s.firsts, s.pooled, s.edge, proxyIdle, s.pastIdle, proxyIdle, s.replayed, s.replays, lost, s.overshoot.Round(time.Millisecond))
}

// idleRounds sends a round of idleBurst requests at once, then, for each
// idle offset, waits proxyIdle plus it after the round's last request
// ended and sends the next round. The first attempt of every request is
// traced (whether its connection was pooled, and how long it had been
// idle).
func idleRounds(t *testing.T, c *protocol.Client, base string) idleStats {
	t.Helper()
	l := ledger.New(time.Now())
	tg := protocol.Target{Base: base, Adapter: protocol.OpenAIChat{}}
	p := protocol.Params{Model: "m", MaxTokens: 4, Messages: []protocol.Message{{Role: "user", Content: "idle?"}}}
	st := idleStats{idle: map[*ledger.Record]time.Duration{}}
	var mu sync.Mutex
	round := func(after bool) {
		var wg sync.WaitGroup
		for range idleBurst {
			r := l.Plan(ledger.Meta{Target: "gw", Class: "c", Traffic: ledger.TrafficProbe, Mode: ledger.ModeClosed, API: "openai-chat"}, l.Now())
			st.recs = append(st.recs, r)
			wg.Add(1)
			go func() {
				defer wg.Done()
				first := true
				ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) {
					mu.Lock()
					defer mu.Unlock()
					if !first || !after {
						return
					}
					first = false
					st.firsts++
					if !ci.Reused {
						return
					}
					st.pooled++
					st.idle[r] = ci.IdleTime
					d := ci.IdleTime - proxyIdle
					switch {
					case d >= -5*time.Millisecond && d <= 5*time.Millisecond:
						st.edge++
					}
					if d >= 0 {
						st.pastIdle++
					}
					if ci.IdleTime > proxyRetired+hostSlack {
						st.pooledLate++
					}
				}})
				res := c.Do(ctx, tg, p, r, l.Now, func() { l.MarkDispatched(r) })
				if err := l.Finish(r, res.Outcome, res.Reason, res.Err); err != nil {
					t.Errorf("finish: %v", err)
				}
			}()
		}
		wg.Wait()
	}
	round(false)
	for _, off := range idleOffsets {
		gap := proxyIdle + off
		end := time.Now()
		time.Sleep(gap)
		st.overshoot = max(st.overshoot, time.Since(end)-gap)
		round(true)
	}
	for _, r := range st.recs {
		st.replays += r.Replays
		if r.Replays > 0 {
			st.replayed++
		}
	}
	if err := l.Verify(); err != nil {
		t.Errorf("ledger: %v", err)
	}
	return st
}
