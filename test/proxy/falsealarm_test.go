package proxy

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestBufferedRuleFalseAlarms measures the buffered-stream rule on direct,
// unbuffered streams of every API the simulator speaks, at paces from the
// simulator's 20 ms per token down to 1 ms (five times faster than the
// rule's pace floor): no stream may be flagged. A flag here is a false
// alarm, unless the generator was starved for the stream's whole length
// (a dispatch lag above lagBound says the host was).
func TestBufferedRuleFalseAlarms(t *testing.T) {
	apis := []string{protocol.APIOpenAIChat, protocol.APIOpenAICompletions, protocol.APIOpenAIResponses, protocol.APIAnthropicMessages}
	paces := []time.Duration{20 * time.Millisecond, 5 * time.Millisecond, time.Millisecond}
	const streams = 6
	total, flagged := 0, 0
	for _, pace := range paces {
		cfg := sim.DefaultConfig()
		cfg.TTFT = sim.FixedDist(0.02)
		cfg.TokenTime = sim.FixedDist(pace.Seconds())
		cfg.OutputTokens = sim.FixedDist(simTokens)
		cfg.Slots, cfg.AdmissionLimit = 16, 64
		base := testutil.StartSim(t, cfg)
		c, err := protocol.NewClient(protocol.ClientOptions{NoProxy: true, Timeouts: protocol.Timeouts{Total: 30 * time.Second}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		for _, api := range apis {
			a, err := protocol.Lookup(api)
			if err != nil {
				t.Fatal(err)
			}
			recs := direct(t, c, protocol.Target{Base: base, Adapter: a}, streams)
			n, starved := 0, hostStarved(recs, lagBound)
			for _, r := range recs {
				if r.Outcome != ledger.OK {
					t.Errorf("%s at %v per token: %s/%s %q", api, pace, r.Outcome, r.Reason, r.Error)
					continue
				}
				total++
				if r.BufferedByIntermediary {
					n++
				}
			}
			flagged += n
			if n > 0 && !starved {
				t.Errorf("%s at %v per token: %d of %d direct streams flagged buffered", api, pace, n, len(recs))
			}
		}
		c.CloseIdleConnections()
	}
	t.Logf("false alarms: %d flagged of %d direct streams (4 APIs × %v per token × %d streams of %d tokens)", flagged, total, paces, streams, simTokens)
}

// direct sends n requests to tg, one every 50 ms, and returns the finished records.
func direct(t *testing.T, c *protocol.Client, tg protocol.Target, n int) []*ledger.Record {
	t.Helper()
	return directN(t, c, tg, n, simTokens)
}

// directN is direct asking for tokens tokens.
func directN(t *testing.T, c *protocol.Client, tg protocol.Target, n, tokens int) []*ledger.Record {
	t.Helper()
	l := ledger.New(time.Now())
	p := protocol.Params{Model: "m", MaxTokens: tokens, Messages: []protocol.Message{{Role: "user", Content: "Hello, direct!"}}}
	recs := make([]*ledger.Record, n)
	var wg sync.WaitGroup
	start := l.Now()
	for i := range n {
		planned := start + time.Duration(i)*50*time.Millisecond
		r := l.Plan(ledger.Meta{Target: "direct", Class: "c", Traffic: ledger.TrafficProbe, Mode: ledger.ModeOpen, API: tg.Adapter.Name()}, planned)
		recs[i] = r
		if d := planned - l.Now(); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := c.Do(context.Background(), tg, p, r, l.Now, func() { l.MarkDispatched(r) })
			if err := l.Finish(r, res.Outcome, res.Reason, res.Err); err != nil {
				t.Errorf("finish: %v", err)
			}
		}()
	}
	wg.Wait()
	return recs
}
