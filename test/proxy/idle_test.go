package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
)

// proxyIdle is nginx's keepalive_timeout in this test: short, so that the
// prober's pool holds connections the proxy is closing.
const proxyIdle = 300 * time.Millisecond

// TestProxyIdleTimeout sends requests one after another with idle gaps
// around nginx's keepalive_timeout, through its plain listener (the
// streaming HTTP/1.1 transport) and its TLS one (HTTP/1.1 and HTTP/2):
// the proxy closes idle connections while the prober may be taking them
// from its pool. No request may be lost to that race: every one ends ok,
// the replays that saved some are recorded on their records.
func TestProxyIdleTimeout(t *testing.T) {
	requireNginx(t)
	n := startNginx(t, proxyConfig{Upstream: startSim(t, simTTFT), KeepAlive: proxyIdle})
	gaps := []time.Duration{}
	for i := range 11 { // 0.95 to 1.05 times the proxy's idle timeout
		gaps = append(gaps, proxyIdle*time.Duration(95+i)/100)
	}
	for _, tc := range []struct {
		name string
		base string
		h1   bool
	}{{"plain HTTP/1.1", n.PlainURL(), true}, {"TLS HTTP/1.1", n.TLSURL(), true}, {"TLS HTTP/2", n.TLSURL(), false}} {
		t.Run(tc.name, func(t *testing.T) {
			c := client(t, n.cfg.CAFile, tc.h1)
			recs := sequential(t, c, tc.base, gaps)
			replays := 0
			for _, r := range recs {
				replays += r.Replays
				if r.Outcome != ledger.OK {
					t.Errorf("request %d after an idle gap: %s/%s %q (replays %d)", r.ID, r.Outcome, r.Reason, r.Error, r.Replays)
				}
				if r.Replays > 0 && r.ReplayReason != ledger.ReasonStaleConnection {
					t.Errorf("request %d replayed %d times with reason %q", r.ID, r.Replays, r.ReplayReason)
				}
			}
			t.Logf("%s: %d requests after idle gaps of %v to %v (nginx keepalive_timeout %v): %d replays recorded",
				tc.name, len(recs), gaps[0], gaps[len(gaps)-1], proxyIdle, replays)
		})
	}
}

// sequential sends one request, waits the first gap after its end, sends
// the next, and so on; it returns the finished records.
func sequential(t *testing.T, c *protocol.Client, base string, gaps []time.Duration) []*ledger.Record {
	t.Helper()
	l := ledger.New(time.Now())
	tg := protocol.Target{Base: base, Adapter: protocol.OpenAIChat{}}
	p := protocol.Params{Model: "m", MaxTokens: 4, Messages: []protocol.Message{{Role: "user", Content: "idle?"}}}
	var recs []*ledger.Record
	for _, gap := range gaps {
		r := l.Plan(ledger.Meta{Target: "gw", Class: "c", Traffic: ledger.TrafficProbe, Mode: ledger.ModeClosed, API: "openai-chat"}, l.Now())
		res := c.Do(context.Background(), tg, p, r, l.Now, func() { l.MarkDispatched(r) })
		if err := l.Finish(r, res.Outcome, res.Reason, res.Err); err != nil {
			t.Errorf("finish: %v", err)
		}
		recs = append(recs, r)
		time.Sleep(gap)
	}
	if err := l.Verify(); err != nil {
		t.Errorf("ledger: %v", err)
	}
	return recs
}
