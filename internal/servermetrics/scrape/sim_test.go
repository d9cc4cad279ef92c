package scrape

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestSimulatorUnderLoad scrapes the built-in simulator's /metrics while
// more requests arrive than it has slots: the server view sees the waiting
// queue grow, every slot (KV cache) in use, and the server-side TTFT of
// every request.
func TestSimulatorUnderLoad(t *testing.T) {
	const slots, requests = 2, 6
	cfg := sim.DefaultConfig()
	cfg.Slots = slots
	cfg.AdmissionLimit = 16
	cfg.TTFT = sim.FixedDist(0.005)
	cfg.TokenTime = sim.FixedDist(0.002)
	cfg.OutputTokens = sim.FixedDist(4)
	// Service stalls for the first second and a half: the first two
	// requests hold the slots and the rest wait, whatever the machine's
	// speed, while the sampler looks.
	cfg.Windows = []sim.Window{{Start: 0, Duration: 1500 * time.Millisecond, Stall: true}}
	srv, base := testutil.ServeSim(t, cfg)
	scraper := newScraper(t, Options{URL: strings.TrimSuffix(base, "/v1") + "/metrics", Interval: MinInterval})

	w, err := scraper.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var wg sync.WaitGroup
	errs := make(chan error, requests)
	for range requests {
		wg.Go(func() {
			resp, err := client.Post(base+"/chat/completions", "application/json",
				strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				errs <- err
			}
		})
	}
	// Wait until the queue is seen full by the server itself, then let the
	// load finish.
	deadline := time.Now().Add(10 * time.Second)
	for st := srv.Stats(); st.Queued < requests-slots && time.Now().Before(deadline); st = srv.Stats() {
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	v, err := w.End(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v.Flavour != servermetrics.VLLM {
		t.Fatalf("flavour %q, want vllm (the simulator speaks vLLM's names)", v.Flavour)
	}
	if g := get(t, v, servermetrics.Waiting).Gauge; g.Start != 0 || g.Max != requests-slots || g.Last != 0 {
		t.Errorf("waiting %+v: want 0 → %d → 0", g, requests-slots)
	}
	if g := get(t, v, servermetrics.Running).Gauge; g.Max != slots || g.Last != 0 {
		t.Errorf("running %+v", g)
	}
	if g := get(t, v, servermetrics.KVCache).Gauge; g.Max != 1 || g.Start != 0 {
		t.Errorf("kv cache %+v: every slot in use is a full cache", g)
	}
	ttft := get(t, v, servermetrics.TTFT).Histogram
	if ttft.Count != requests || ttft.P50 == nil || ttft.P50.Value < 0.005 {
		t.Errorf("server TTFT %+v: one per request, none below the prefill time", ttft)
	}
	if itl := get(t, v, servermetrics.ITL).Histogram; itl.Count != requests*3 {
		t.Errorf("server ITL %+v: three intervals per four-token request", itl)
	}
	if e2e := get(t, v, servermetrics.E2E).Histogram; e2e.Count != requests {
		t.Errorf("server e2e %+v", e2e)
	}
	// The queued requests waited at least until the stall ended.
	if q := get(t, v, servermetrics.QueueTime).Histogram; q.Count != requests || q.P99 == nil || q.P99.Value < 0.5 {
		t.Errorf("server queue time %+v p99 %+v", q, q.P99)
	}
	if c := get(t, v, servermetrics.Finished).Counter; c.Increase != requests || c.Resets != 0 {
		t.Errorf("finished %+v", c)
	}
	if c := get(t, v, servermetrics.GenTokens).Counter; c.Increase != requests*4 {
		t.Errorf("generated tokens %+v", c)
	}
	if !strings.HasPrefix(v.Explanation, "waiting queue grew from 0 to 4 (0 at the end); running up to 2; KV cache up to 100 %; server TTFT p95 ") {
		t.Errorf("explanation %q", v.Explanation)
	}
	mustJSON(t, v)
}
