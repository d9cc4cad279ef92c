package scrape

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// complete asks for n tokens exactly (ignore_eos) and returns the
// completion tokens the server reported.
func complete(ctx context.Context, c *http.Client, base string, n int) (int, error) {
	body, _ := json.Marshal(map[string]any{"model": "tiny", "prompt": fmt.Sprintf("count to %d", n), "max_tokens": n, "ignore_eos": true})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/completions", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, err
	}
	return r.Usage.CompletionTokens, nil
}

// TestLlamaCPPRealServer: against llama.cpp's own server, started with
// start.sh: the flavour is detected, the number of slots read, and the
// generated tokens over the window equal the completion tokens of the
// requests sent in it; nothing is read as a reset.
func TestLlamaCPPRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts llama.cpp's server: not with -short")
	}
	base := testutil.StartLlamaCpp(t).URL()
	s := newScraper(t, Options{URL: base + "/metrics", Interval: 200 * time.Millisecond, Timeout: 5 * time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	w, err := s.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	var (
		mu   sync.Mutex
		sent int
		errs []error
		wg   sync.WaitGroup
	)
	for i := range 6 { // more than its 4 slots: some wait, deferred
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := complete(ctx, c, base, 200+10*i)
			mu.Lock()
			defer mu.Unlock()
			sent += n
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	v, err := w.End(ctx)
	if err != nil || len(errs) > 0 {
		t.Fatalf("end: %v; requests: %v", err, errs)
	}
	if v.Flavour != servermetrics.LlamaCPP || v.Slots != 4 {
		t.Errorf("flavour %q with %d slots, want llamacpp with 4 (start.sh: --parallel 4)", v.Flavour, v.Slots)
	}
	gen := get(t, v, servermetrics.GenTokens).Counter
	if sent != 6*200+10*15 || gen.Increase != float64(sent) || gen.Resets != 0 {
		t.Errorf("server generated %+v over the window; the requests got %d completion tokens", gen, sent)
	}
	if p := get(t, v, servermetrics.PromptTokens).Counter; p.Increase <= 0 {
		t.Errorf("prompt tokens %+v", p)
	}
	for _, r := range []servermetrics.Role{servermetrics.Running, servermetrics.Waiting, servermetrics.TokensMax, servermetrics.SlotsPerDec} {
		if s := get(t, v, r); s.Kind != servermetrics.Gauge {
			t.Errorf("%s read as %s", s.Metric, s.Kind)
		}
	}
	if strings.Contains(v.Explanation, "reset") || !strings.Contains(v.Explanation, "tokens generated") {
		t.Errorf("explanation %q", v.Explanation)
	}
	t.Logf("llama.cpp server view: %s", v.Explanation)
}
