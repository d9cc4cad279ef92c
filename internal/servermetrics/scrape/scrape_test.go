package scrape

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
)

const secret = "sk-test-SENTINEL-0123456789abcdef"

// serve starts a loopback server and returns its /metrics URL.
func serve(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

func newScraper(t *testing.T, o Options) *Scraper {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// TestScrape: one scrape of a real HTTP server, good and hostile.
func TestScrape(t *testing.T) {
	vllm := fixture(t, "vllm_end.prom")
	bomb := gzipped(make([]byte, 16<<20)) // 16 MiB of zeros in ~16 KiB
	tests := []struct {
		name    string
		h       http.HandlerFunc
		wantErr string // "" = success
		cause   string // the start of FailureCause
	}{
		{"vLLM text", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Accept") == "" || !strings.HasPrefix(r.Header.Get("Accept"), "text/plain") {
				http.Error(w, "want text", http.StatusNotAcceptable)
				return
			}
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			_, _ = w.Write(vllm)
		}, "", ""},
		{"gzip", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(gzipped(vllm))
		}, "", ""},
		{"body over the bound", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			for range 100 {
				_, _ = w.Write(vllm)
			}
		}, "body larger than 1048576 bytes", "body larger than 1048576 bytes"},
		{"gzip bomb", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(bomb)
		}, "body larger than 1048576 bytes", "body larger"},
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, "HTTP 404 (want 200)", "HTTP 404"},
		{"redirect not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
		}, "HTTP 302", "HTTP 302"},
		{"a login page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, "<html>sign in</html>")
		}, "unsupported content type \"text/html; charset=utf-8\"", "parse error: unsupported content type"},
		{"garbage echoing a secret", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "vllm:num_requests_waiting{key=\""+secret+"\" 1 \x1b[2J\xff\n")
		}, "text format parsing error", "parse error: parse text format: text format parsing error"},
		{"server hangs", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, "deadline exceeded", "timeout after 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := serve(t, tt.h)
			s := newScraper(t, Options{URL: u, Timeout: 300 * time.Millisecond, MaxBodyBytes: 1 << 20, Redactor: sanitize.NewRedactor(secret)})
			e, err := s.Scrape(context.Background())
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if servermetrics.Detect(e) != servermetrics.VLLM || len(e.Families) != 19 || e.At.IsZero() {
					t.Errorf("exposition: %d families, at %v", len(e.Families), e.At)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "scrape "+u+": ") || strings.Count(msg, u) != 1 {
				t.Errorf("error should name the URL once: %q", msg)
			}
			if strings.Contains(msg, secret[:sanitize.MinFragment]) || !utf8.ValidString(msg) || strings.ContainsAny(msg, "\x1b\n\x00") {
				t.Errorf("error not sanitised: %q", msg)
			}
			cause := servermetrics.FailureCause(err)
			if !strings.HasPrefix(cause, tt.cause) || len(cause) > causeMax || strings.Contains(cause, secret[:sanitize.MinFragment]) ||
				!utf8.ValidString(cause) || strings.ContainsAny(cause, "\x1b\n\x00") {
				t.Errorf("cause %q, want it to start %q, sanitised and bounded", cause, tt.cause)
			}
		})
	}
}

// TestNew: options are checked, and a URL's credentials never reach a
// message.
func TestNew(t *testing.T) {
	for _, o := range []Options{
		{URL: ""},
		{URL: "127.0.0.1:8000/metrics"},
		{URL: "ftp://h/metrics"},
		{URL: "http://127.0.0.1/metrics", Interval: time.Millisecond},
		{URL: "http://127.0.0.1/metrics", Timeout: -1},
		{URL: "http://127.0.0.1/metrics", Flavour: "triton"},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v): no error", o)
		}
	}
	if _, err := New(Options{URL: "gopher://user:" + secret + "@h/metrics"}); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("credentials in the error: %v", err)
	}
	s := newScraper(t, Options{URL: "http://user:" + secret + "@127.0.0.1:1/metrics", Timeout: 200 * time.Millisecond})
	_, err := s.Scrape(context.Background())
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), sanitize.Marker) {
		t.Errorf("scrape error: %v", err)
	}
	if c := servermetrics.FailureCause(err); c != "connection refused" {
		t.Errorf("cause of a refused connection: %q", c)
	}
}

// series serves a vLLM-style exposition whose waiting queue and finished
// counter grow by one per scrape; fail makes scrapes from a count on
// answer 500.
type series struct {
	n    atomic.Int64
	fail atomic.Int64 // scrape number from which to fail; 0 = never
}

func (s *series) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.n.Add(1)
	if f := s.fail.Load(); f > 0 && n >= f {
		http.Error(w, "engine dead", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting %d\n", n-1)
	fmt.Fprintf(w, "# TYPE vllm:request_success_total counter\nvllm:request_success_total %d\n", 100+10*n)
}

// TestWindow: Start, samples every interval, End: the view folds every
// scrape the server answered.
func TestWindow(t *testing.T) {
	srv := &series{}
	u := serve(t, srv.ServeHTTP)
	now := t0
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); now = now.Add(time.Second); return now }
	s := newScraper(t, Options{URL: u, Interval: MinInterval, Flavour: " VLLM ", Now: clock})
	w, err := s.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for srv.n.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	v, err := w.End(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := int(srv.n.Load()) // every scrape answered: start, samples, end
	if n < 5 || v.Scrapes != n || v.FailedScrapes != 0 || v.Partial {
		t.Fatalf("%d scrapes served, view %+v", n, v)
	}
	if v.Flavour != servermetrics.VLLM || v.URL != u || v.Seconds != float64(n-1) {
		t.Errorf("view: flavour %q, url %q, %v s", v.Flavour, v.URL, v.Seconds)
	}
	g := get(t, v, servermetrics.Waiting).Gauge
	if g.Start != 0 || g.Max != float64(n-1) || g.Last != float64(n-1) || g.Samples != n {
		t.Errorf("waiting %+v after %d scrapes", g, n)
	}
	c := get(t, v, servermetrics.Finished).Counter
	if c.Increase != float64(10*(n-1)) || c.Rate != 10 {
		t.Errorf("finished %+v", c)
	}
	if want := fmt.Sprintf("waiting queue grew from 0 to %d", n-1); v.Explanation != want {
		t.Errorf("explanation %q, want %q", v.Explanation, want)
	}
	if _, err := w.End(context.Background()); err == nil {
		t.Error("a second End succeeded")
	}
}

// TestWindowFailures: a failed start is no window; failed samples are
// counted; a failed end gives a partial view ending at the last sample.
func TestWindowFailures(t *testing.T) {
	srv := &series{}
	srv.fail.Store(1)
	u := serve(t, srv.ServeHTTP)
	s := newScraper(t, Options{URL: u, Interval: MinInterval})
	if w, err := s.Start(context.Background()); err == nil || w != nil || !strings.Contains(err.Error(), "HTTP 500") {
		t.Fatalf("start against a failing server: %v, %v", w, err)
	}

	srv.n.Store(0)
	srv.fail.Store(4) // start, two samples, then failures
	w, err := s.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for srv.n.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	v, err := w.End(context.Background())
	if err == nil || !strings.Contains(err.Error(), "HTTP 500") {
		t.Fatalf("End: %v", err)
	}
	n := int(srv.n.Load())
	if !v.Partial || v.Scrapes != 3 || v.FailedScrapes != n-3 || !strings.Contains(v.Error, "HTTP 500") {
		t.Errorf("view after %d requests: %+v", n, v)
	}
	if g := get(t, v, servermetrics.Waiting).Gauge; g.Last != 2 || g.Samples != 3 {
		t.Errorf("waiting %+v", g)
	}
	want := fmt.Sprintf("waiting queue grew from 0 to 2; %d of %d scrapes failed (last: HTTP 500); no end scrape", n-3, n)
	if v.Explanation != want {
		t.Errorf("explanation %q, want %q", v.Explanation, want)
	}
	mustJSON(t, v)
}

// TestWindowStops: the sampler stops with Close and with the context
// given to Start (goleak checks no goroutine is left).
func TestWindowStops(t *testing.T) {
	srv := &series{}
	u := serve(t, srv.ServeHTTP)
	s := newScraper(t, Options{URL: u, Interval: MinInterval})

	w, err := s.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := w.End(context.Background()); err == nil {
		t.Error("End after Close succeeded")
	}

	ctx, cancel := context.WithCancel(context.Background())
	w, err = s.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the sampler did not stop with its context")
	}
	before := srv.n.Load()
	time.Sleep(3 * MinInterval)
	if after := srv.n.Load(); after != before {
		t.Errorf("%d scrapes after the context ended", after-before)
	}
	// End still closes the window with a scrape of its own context.
	if v, err := w.End(context.Background()); err != nil || v.Scrapes < 2 {
		t.Errorf("End after cancel: %v, %+v", err, v)
	}

	// Without an interval there is no sampler: start and end only.
	s0 := newScraper(t, Options{URL: u})
	w, err = s0.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * MinInterval)
	if v, err := w.End(context.Background()); err != nil || v.Scrapes != 2 {
		t.Errorf("no interval: %v, %+v", err, v)
	}
}
