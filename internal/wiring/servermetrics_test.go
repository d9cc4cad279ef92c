package wiring

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/servermetrics/scrape"
)

// TestServerMetricsScraper: a target's server_metrics becomes a scraper
// that goes through the target's own transport (its CA verifies the
// endpoint's certificate) and sends none of its credentials (no API key,
// no configured header); no url, no scraper.
func TestServerMetricsScraper(t *testing.T) {
	const key = "sk-wiring-SENTINEL-0123456789"
	t.Setenv("LLMPROBE_WIRING_SM_KEY", key)
	var mu sync.Mutex
	var seen []http.Header
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 4\n")
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	target := func(caFile string) config.Target {
		tg := config.DefaultTarget()
		tg.Name, tg.URL, tg.Model = "t", srv.URL+"/v1", "m"
		tg.APIKeyEnv = "LLMPROBE_WIRING_SM_KEY"
		tg.Headers = map[string]string{"X-Team": "probe"}
		tg.TLS.CAFile = caFile
		tg.ServerMetrics.URL = srv.URL + "/metrics"
		return tg
	}
	scrape := func(t *testing.T, tg config.Target) (servermetrics.View, error) {
		t.Helper()
		c, _, err := Client(tg, ClientOptions{Buffers: Buffers(config.Defaults().Limits)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		sm, err := ServerMetrics(tg, c)
		if err != nil || sm == nil {
			t.Fatalf("ServerMetrics: %v, %v", sm, err)
		}
		w, err := sm.Start(context.Background())
		if err != nil {
			return servermetrics.View{}, err
		}
		return w.End(context.Background())
	}

	v, err := scrape(t, target(ca))
	if err != nil {
		t.Fatalf("scrape through the target's CA: %v", err)
	}
	if v.Flavour != servermetrics.VLLM || v.Scrapes != 2 || v.Get(servermetrics.Waiting).Gauge.Max != 4 {
		t.Errorf("view %+v", v)
	}
	mu.Lock()
	for _, h := range seen {
		if h.Get("Authorization") != "" || h.Get("X-Team") != "" || strings.Contains(fmt.Sprint(h), key) {
			t.Errorf("a scrape carried the target's credentials or headers: %v", h)
		}
	}
	mu.Unlock()

	// Without the target's CA the certificate is not trusted: the scraper
	// uses the target's TLS settings, not a default client's.
	if _, err := scrape(t, target("")); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("scrape without the CA: %v, want a certificate error", err)
	}

	off := target(ca)
	off.ServerMetrics.URL = ""
	c, _, err := Client(off, ClientOptions{Buffers: Buffers(config.Defaults().Limits)})
	if err != nil {
		t.Fatal(err)
	}
	if sm, err := ServerMetrics(off, c); sm != nil || err != nil {
		t.Errorf("no url: %v, %v; want nil, nil", sm, err)
	}
	bad := target(ca)
	bad.ServerMetrics.Flavour = "triton"
	if _, err := ServerMetrics(bad, c); err == nil || !strings.Contains(err.Error(), `unknown server flavour "triton"`) {
		t.Errorf("bad flavour: %v", err)
	}
	bad = target(ca)
	bad.ServerMetrics.Interval = config.Duration(10 * time.Millisecond)
	if _, err := ServerMetrics(bad, c); err == nil {
		t.Error("an interval below the scraper's minimum was accepted")
	}
}

// TestServerMetricsIntervalBound: config (a leaf) and servermetrics hold
// the same shortest scrape interval.
func TestServerMetricsIntervalBound(t *testing.T) {
	if config.MinServerMetricsInterval != scrape.MinInterval {
		t.Errorf("config.MinServerMetricsInterval %v ≠ scrape.MinInterval %v", config.MinServerMetricsInterval, scrape.MinInterval)
	}
}
