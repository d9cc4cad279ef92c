package proxy

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestBufferedRuleOnABusyHost runs direct streams — llama.cpp's (400 tokens,
// its own timings) and the simulator's four APIs at 20 and 5 ms per token
// (64 tokens, no timings: the pace floor) — with two shell busy loops on
// the cores, and holds the buffered-stream rules to no false alarm: a
// reader that a busy host keeps from its socket now and then still spends
// most of the generation reading (measured: 70 % or more of it, against at
// most 5 % for the rules to flag), and never hears a silence of a buffer's
// worth between every two bursts. The one exception is the host's: a test
// process kept off the CPU for as long as a whole stream (a stall of
// stallBound or more, seen by a ticker of its own, while the batch ran)
// reads that stream in one burst, as a proxy would have released it; such
// a flag is logged and counted as the host's, never passed silently.
func TestBufferedRuleOnABusyHost(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs two busy loops for about 20 s")
	}
	srv := testutil.StartLlamaCpp(t)
	testutil.BusyLoops(t, 2, 5*time.Minute)
	stalls := watchStalls(t)
	total, flagged, hosts := 0, 0, 0
	check := func(what string, recs []*ledger.Record) {
		stall := stalls.take()
		t.Logf("%s: the test process's longest stall while it ran: %v", what, stall.Round(time.Millisecond))
		for _, r := range recs {
			if r.Outcome != ledger.OK {
				t.Errorf("%s: request %d %s/%s %q", what, r.ID, r.Outcome, r.Reason, r.Error)
				continue
			}
			total++
			shape := shapeOf(r)
			switch {
			case r.BufferedByIntermediary && stall >= stallBound:
				hosts++
				t.Logf("%s: direct stream %d flagged buffered while the test process was kept off the CPU for %v (the host's): %s", what, r.ID, stall.Round(time.Millisecond), shape)
			case r.BufferedByIntermediary:
				flagged++
				t.Errorf("%s: direct stream %d flagged buffered on a busy host (longest stall of the test process %v): %s", what, r.ID, stall.Round(time.Millisecond), shape)
			default:
				t.Logf("%s: %s", what, shape)
			}
		}
	}
	p := protocol.Params{Model: "m", MaxTokens: 400, Messages: []protocol.Message{{Role: "user", Content: "Tell me a long story about a busy host."}}}
	check("llama.cpp", runWith(t, client(t, "", true), srv.URL()+"/v1", p, 6, 500*time.Millisecond, nil))
	for _, pace := range []time.Duration{20 * time.Millisecond, 5 * time.Millisecond} {
		cfg := sim.DefaultConfig()
		cfg.TTFT = sim.FixedDist(0.02)
		cfg.TokenTime = sim.FixedDist(pace.Seconds())
		cfg.OutputTokens = sim.FixedDist(64)
		cfg.Slots, cfg.AdmissionLimit = 16, 64
		base := testutil.StartSim(t, cfg)
		c, err := protocol.NewClient(protocol.ClientOptions{NoProxy: true, Timeouts: protocol.Timeouts{Total: 30 * time.Second}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		for _, api := range []string{protocol.APIOpenAIChat, protocol.APIOpenAICompletions, protocol.APIOpenAIResponses, protocol.APIAnthropicMessages} {
			a, err := protocol.Lookup(api)
			if err != nil {
				t.Fatal(err)
			}
			check("sim "+api+" at "+pace.String(), directN(t, c, protocol.Target{Base: base, Adapter: a}, 4, 64))
		}
		c.CloseIdleConnections()
	}
	t.Logf("busy host (2 busy loops): %d of %d direct streams flagged buffered (false alarms), %d more while the host kept the test process off the CPU for %v or more", flagged, total, hosts, stallBound)
}

// stallBound is the stall of the test process past which a stream of the
// batch may have been read in one burst by the host's doing: half the
// pace floor's generation of the shortest judged stream (64 tokens: 315 ms).
const stallBound = 150 * time.Millisecond

// stallWatch is a ticker of the test's own that measures how late it
// wakes: how long the process was kept off the CPU.
type stallWatch struct {
	mu      sync.Mutex
	longest time.Duration
}

// watchStalls starts a stallWatch, stopped when the test ends.
func watchStalls(t *testing.T) *stallWatch {
	w := &stallWatch{}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		const every = 5 * time.Millisecond
		tick := time.NewTicker(every)
		defer tick.Stop()
		last := time.Now()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				at := time.Now()
				late := at.Sub(last) - every
				last = at
				w.mu.Lock()
				w.longest = max(w.longest, late)
				w.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		close(done)
		<-stopped
	})
	return w
}

// take is the longest stall since the last take.
func (w *stallWatch) take() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.longest
	w.longest = 0
	return d
}
