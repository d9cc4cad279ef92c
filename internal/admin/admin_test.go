package admin

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"go.uber.org/goleak"
	"golang.org/x/crypto/bcrypt"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

func testRegistry(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "llmprobe_time_to_first_token_seconds", Help: "TTFT.",
		Buckets: []float64{0.1, 1}, NativeHistogramBucketFactor: 1.1,
	})
	reg.MustRegister(h)
	h.Observe(0.2)
	return reg
}

func get(t *testing.T, h http.Handler, path string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestMetricsEncoding: /metrics is compressed as the scraper asks: gzip
// for a Prometheus ("gzip"; "zstd,gzip" with its zstd-scrape feature on:
// zstd is not offered, since it cost the prober more CPU than gzip at
// 1,000 targets, BenchmarkScrapeEncoding), nothing when nothing is asked;
// each decodes to the same exposition.
func TestMetricsEncoding(t *testing.T) {
	h := Handler(Options{Gatherer: testRegistry(t)})
	plain := get(t, h, "/metrics", nil).Body.String()
	if !strings.Contains(plain, "llmprobe_time_to_first_token_seconds") {
		t.Fatalf("plain exposition lacks the histogram: %q", plain)
	}
	for _, tc := range []struct{ accept, want string }{
		{"zstd,gzip", "gzip"}, {"gzip", "gzip"}, {"zstd", ""}, {"", ""}, {"identity", ""},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			rec := get(t, h, "/metrics", map[string]string{"Accept-Encoding": tc.accept})
			if got := rec.Header().Get("Content-Encoding"); got != tc.want {
				t.Fatalf("Accept-Encoding %q: Content-Encoding %q, want %q", tc.accept, got, tc.want)
			}
			var r io.Reader = rec.Body
			if tc.want == "gzip" {
				g, err := gzip.NewReader(rec.Body)
				if err != nil {
					t.Fatal(err)
				}
				r = g
			}
			body, err := io.ReadAll(r)
			if err != nil || string(body) != plain {
				t.Errorf("decoded body differs from the plain one (err %v): %q", err, body)
			}
		})
	}
}

func TestMetricsNegotiation(t *testing.T) {
	h := Handler(Options{Gatherer: testRegistry(t)})
	tests := []struct {
		name, accept, wantType string
	}{
		{"text", "", "text/plain"},
		{"openmetrics", "application/openmetrics-text;version=1.0.0", "application/openmetrics-text"},
		{"protobuf", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited", "application/vnd.google.protobuf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(t, h, "/metrics", map[string]string{"Accept": tc.accept})
			if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), tc.wantType) {
				t.Fatalf("status %d, type %q", rec.Code, rec.Header().Get("Content-Type"))
			}
			if tc.name != "protobuf" {
				return
			}
			// The protobuf scrape carries the native histogram.
			dec := expfmt.NewDecoder(bytes.NewReader(rec.Body.Bytes()), expfmt.NewFormat(expfmt.TypeProtoDelim))
			var mf dto.MetricFamily
			if err := dec.Decode(&mf); err != nil {
				t.Fatal(err)
			}
			if hist := mf.GetMetric()[0].GetHistogram(); hist.Schema == nil || len(hist.GetPositiveSpan()) == 0 {
				t.Errorf("no native histogram in the protobuf scrape: %v", hist)
			}
		})
	}
}

func TestHealthAndReady(t *testing.T) {
	var ready atomic.Bool
	h := Handler(Options{Gatherer: testRegistry(t), Ready: ready.Load})
	if rec := get(t, h, "/-/healthy", nil); rec.Code != 200 {
		t.Errorf("healthy = %d", rec.Code)
	}
	if rec := get(t, h, "/-/ready", nil); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("ready before the daemon says so = %d, want 503", rec.Code)
	}
	ready.Store(true)
	if rec := get(t, h, "/-/ready", nil); rec.Code != 200 {
		t.Errorf("ready = %d, want 200", rec.Code)
	}
	if rec := get(t, h, "/nope", nil); rec.Code != 404 {
		t.Errorf("unknown path = %d, want 404", rec.Code)
	}
}

func TestDebugRequests(t *testing.T) {
	ring := ledger.NewRing(3, 5)
	for i := 1; i <= 6; i++ {
		o, r := ledger.OK, ledger.ReasonStop
		if i%3 == 0 {
			o, r = ledger.Timeout, ledger.ReasonIdle
		}
		ring.Record(&ledger.Record{ID: uint64(i), Target: "a", Outcome: o, Reason: r})
	}
	ring.Record(&ledger.Record{ID: 7, Target: "b", Outcome: ledger.OK, Reason: ledger.ReasonStop})
	h := Handler(Options{Gatherer: testRegistry(t), Ring: ring})
	type resp struct {
		Targets []struct {
			Target   string `json:"target"`
			Last     []ledger.Record
			Failures []ledger.Record
		}
	}
	tests := []struct {
		path        string
		targets     int
		last, fails []uint64 // of the first target
		code        int
	}{
		{"/debug/requests", 2, []uint64{4, 5, 6}, []uint64{3, 6}, 200},
		{"/debug/requests?target=a&n=1", 1, []uint64{6}, []uint64{6}, 200},
		{"/debug/requests?target=zz", 1, nil, nil, 200},
		{"/debug/requests?n=-1", 0, nil, nil, 400},
	}
	for _, tc := range tests {
		rec := get(t, h, tc.path, nil)
		if rec.Code != tc.code {
			t.Errorf("%s: status %d, want %d", tc.path, rec.Code, tc.code)
			continue
		}
		if tc.code != 200 {
			continue
		}
		var got resp
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if len(got.Targets) != tc.targets {
			t.Fatalf("%s: %d targets, want %d", tc.path, len(got.Targets), tc.targets)
		}
		var last, fails []uint64
		for _, r := range got.Targets[0].Last {
			last = append(last, r.ID)
		}
		for _, r := range got.Targets[0].Failures {
			fails = append(fails, r.ID)
		}
		if fmt.Sprint(last) != fmt.Sprint(tc.last) || fmt.Sprint(fails) != fmt.Sprint(tc.fails) {
			t.Errorf("%s: last %v failures %v, want %v %v", tc.path, last, fails, tc.last, tc.fails)
		}
	}
	if rec := get(t, Handler(Options{Gatherer: testRegistry(t)}), "/debug/requests", nil); rec.Code != 404 {
		t.Errorf("without a ring = %d, want 404", rec.Code)
	}
}

func TestConfigRedactsSecrets(t *testing.T) {
	type target struct {
		Name      string            `json:"name"`
		URL       string            `json:"url"`
		APIKey    string            `json:"api_key"`
		APIKeyEnv string            `json:"api_key_env"`
		Headers   map[string]string `json:"headers"`
	}
	cfg := map[string]any{"targets": []target{{
		Name: "prod", URL: "https://user:pw@api.example.com/v1?key=sk-123", APIKey: "sk-secret",
		APIKeyEnv: "OPENAI_API_KEY", Headers: map[string]string{"X-Api-Key": "sk-hdr"},
	}}, "admin": map[string]any{"password": "hunter2", "listen": ":9464"}}
	h := Handler(Options{Gatherer: testRegistry(t), Config: func() any { return cfg }})
	rec := get(t, h, "/config", nil)
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	for _, secret := range []string{"sk-secret", "sk-123", "sk-hdr", "hunter2", "user:pw"} {
		if strings.Contains(body, secret) {
			t.Errorf("/config leaks %q:\n%s", secret, body)
		}
	}
	for _, kept := range []string{"OPENAI_API_KEY", "api.example.com/v1", ":9464", `"prod"`} {
		if !strings.Contains(body, kept) {
			t.Errorf("/config lost %q:\n%s", kept, body)
		}
	}
}

// TestStatusPageRouted: the page the daemon hands over is served at /
// and /targets/NAME only (the statuspage package tests the pages
// themselves).
func TestStatusPageRouted(t *testing.T) {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "the page at "+r.URL.Path) })
	h := Handler(Options{Gatherer: testRegistry(t), Status: page})
	for _, path := range []string{"/", "/targets/gpu-a"} {
		if rec := get(t, h, path, nil); rec.Code != 200 || rec.Body.String() != "the page at "+path {
			t.Errorf("GET %s: %d %q, want the page handed over", path, rec.Code, rec.Body.String())
		}
	}
	for _, path := range []string{"/nothing", "/targets", "/targets/a/b"} {
		if rec := get(t, h, path, nil); rec.Code != 404 {
			t.Errorf("GET %s: %d, want 404", path, rec.Code)
		}
	}
	if rec := get(t, Handler(Options{Gatherer: testRegistry(t)}), "/", nil); rec.Code != 404 {
		t.Errorf("GET / without a page: %d, want 404", rec.Code)
	}
}

func TestServerBasicAuthFromWebConfig(t *testing.T) {
	defer goleak.VerifyNone(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(cfgPath, []byte("basic_auth_users:\n  prom: "+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ValidateWebConfig(cfgPath); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServerWith(ServerOptions{Handler: Handler(Options{Gatherer: testRegistry(t)}), Addrs: []string{l.Addr().String()}, WebConfigFile: cfgPath})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	url := "http://" + l.Addr().String() + "/metrics"
	tests := []struct {
		user, pass string
		want       int
	}{
		{"", "", http.StatusUnauthorized},
		{"prom", "wrong", http.StatusUnauthorized},
		{"prom", "s3cret", http.StatusOK},
	}
	for _, tc := range tests {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("user %q: status %d, want %d", tc.user, resp.StatusCode, tc.want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
}

func TestValidateWebConfigRejectsJunk(t *testing.T) {
	p := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(p, []byte("basic_auth_users: [nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ValidateWebConfig(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("ValidateWebConfig = %v, want an error naming the file", err)
	}
}
