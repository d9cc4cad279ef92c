package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/telemetry"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// The simulator behind the proxy: the measurement (20 ms per token,
// 32 tokens), 40 ms to the first token.
const (
	simTokens    = 32
	simTokenTime = 20 * time.Millisecond
	simTTFT      = 40 * time.Millisecond
)

// startSim serves the simulator on loopback and returns its host:port.
func startSim(t *testing.T, ttft time.Duration) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.TTFT = sim.FixedDist(ttft.Seconds())
	cfg.TokenTime = sim.FixedDist(simTokenTime.Seconds())
	cfg.OutputTokens = sim.FixedDist(simTokens)
	cfg.Slots, cfg.AdmissionLimit = 16, 64
	u := testutil.StartSim(t, cfg)
	return strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/v1")
}

// client is a protocol Client for the proxy's TLS listener (trusting the
// test CA), speaking HTTP/2 unless h1.
func client(t *testing.T, caFile string, h1 bool) *protocol.Client {
	t.Helper()
	c, err := protocol.NewClient(protocol.ClientOptions{
		TLS: protocol.TLSOptions{CAFile: caFile}, DisableHTTP2: h1, NoProxy: true,
		Timeouts: protocol.Timeouts{Connect: 5 * time.Second, Total: 30 * time.Second},
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// run sends n requests to base on an open-loop schedule (one every
// `every`), each timed from its planned time, records every finished
// record in rec (when set) and returns the records, all finished.
func run(t *testing.T, c *protocol.Client, base string, n int, every time.Duration, rec *telemetry.Recorder) []*ledger.Record {
	t.Helper()
	p := protocol.Params{Model: "m", MaxTokens: simTokens, Messages: []protocol.Message{{Role: "user", Content: "Hello there, proxy!"}}}
	return runWith(t, c, base, p, n, every, rec)
}

// runWith is run with the request's parameters given.
func runWith(t *testing.T, c *protocol.Client, base string, p protocol.Params, n int, every time.Duration, rec *telemetry.Recorder) []*ledger.Record {
	t.Helper()
	var sinks []ledger.Sink
	if rec != nil {
		sinks = append(sinks, rec)
	}
	l := ledger.New(time.Now(), sinks...)
	tg := protocol.Target{Base: base, Adapter: protocol.OpenAIChat{}}
	recs := make([]*ledger.Record, n)
	var wg sync.WaitGroup
	start := l.Now()
	for i := range n {
		planned := start + time.Duration(i)*every
		r := l.Plan(ledger.Meta{Target: "gw", Class: "c", Traffic: ledger.TrafficProbe, Mode: ledger.ModeOpen, API: "openai-chat"}, planned)
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
	if err := l.Verify(); err != nil {
		t.Errorf("ledger: %v", err)
	}
	return recs
}

// figures are a run's medians (never means), with their count.
type figures struct {
	n, buffered, ok int
	ttft, e2e       time.Duration // p50 over ok records
	replays         int
}

func (f figures) String() string {
	return fmt.Sprintf("%d ok of %d, TTFT p50 %v, e2e p50 %v, %d flagged buffered, %d replays",
		f.ok, f.n, f.ttft.Round(time.Millisecond), f.e2e.Round(time.Millisecond), f.buffered, f.replays)
}

func summarise(recs []*ledger.Record) figures {
	f := figures{n: len(recs)}
	var ttft, e2e []time.Duration
	for _, r := range recs {
		f.replays += r.Replays
		if r.Outcome != ledger.OK {
			continue
		}
		f.ok++
		if r.BufferedByIntermediary {
			f.buffered++
		}
		if v, ok := r.TTFT(); ok {
			ttft = append(ttft, v)
		}
		if v, ok := r.E2E(); ok {
			e2e = append(e2e, v)
		}
	}
	f.ttft, f.e2e = median(ttft), median(e2e)
	return f
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[(len(ds)-1)/2]
}

// gauge reads one series of a gathered family: its value and whether it exists.
func gauge(t *testing.T, g prometheus.Gatherer, name string) (float64, bool) {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			return value(m), true
		}
	}
	return 0, false
}

func value(m *dto.Metric) float64 {
	if m.Gauge != nil {
		return m.GetGauge().GetValue()
	}
	return m.GetCounter().GetValue()
}

// hostStarved reports whether the generator could not keep its schedule in
// a run (a dispatch lag above bound): figures compared against the direct
// path are then the host's, not the proxy's.
func hostStarved(recs []*ledger.Record, bound time.Duration) bool {
	for _, r := range recs {
		if lag, ok := r.DispatchLag(); ok && lag > bound {
			return true
		}
	}
	return false
}

// recordJSON is a record as the ledger writes it.
func recordJSON(t *testing.T, r *ledger.Record) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
