package ladder

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/servermetrics/scrape"
)

func scraper(t *testing.T, url string, interval time.Duration) *scrape.Scraper {
	t.Helper()
	s, err := scrape.New(scrape.Options{URL: url, Interval: interval, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestServerViewPerStep: with server metrics, every step carries the
// simulator's own view of the step's window (its queue, its TTFT over
// exactly the step's requests), its one-line explanation and the TTFT gap;
// the row, the progress report and the history line carry them too.
func TestServerViewPerStep(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a whole ladder against the simulator with its metrics scraped beside every step, in real time")
	}
	defer goleak.VerifyNone(t)
	f, truth := newFixture(t, 2, 1000) // 2 slots × 0.21 s: about 9.5 req/s, a queue beyond
	cfg := baseConfig("sim")
	cfg.Steps = []float64{2, 4 * truth}
	cfg.StopAt = StopAtTop
	cfg.HistoryFile = filepath.Join(t.TempDir(), "history.jsonl")
	cfg.ServerMetrics = scraper(t, strings.TrimSuffix(f.base, "/v1")+"/metrics", 200*time.Millisecond)
	var progress []*ladderresult.LadderStep
	var mu sync.Mutex
	cfg.Progress = func(p Progress) {
		if p.Phase == "done" {
			mu.Lock()
			progress = append(progress, p.Row)
			mu.Unlock()
		}
	}
	r := build(t, f, cfg)
	res, err := r.Run(context.Background(), "manual")
	f.close(t)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 {
		t.Fatalf("%d steps, want 2 (aborted %v: %s)", len(res.Steps), res.Aborted, res.AbortReason)
	}
	for i, s := range rows(t, res) {
		v := s.Server
		if v == nil || v.Unavailable || v.Partial || v.Flavour != servermetrics.VLLM || v.Scrapes < 3 || v.FailedScrapes != 0 {
			t.Fatalf("step %d: server view %+v", s.Step, v)
		}
		ttft := v.Get(servermetrics.TTFT)
		if ttft == nil || ttft.Histogram == nil || ttft.Histogram.Count != float64(s.OK) {
			t.Errorf("step %d: server TTFT %+v, want one observation per ok request (%d): the window is the step's", s.Step, ttft, s.OK)
		}
		if v.Explanation == "" || v.Explanation != servermetrics.Explain(*v) {
			t.Errorf("step %d: explanation %q", s.Step, v.Explanation)
		}
		if s.TTFTGap == nil || s.TTFTGap.ClientCount != s.TTFT.Count {
			t.Errorf("step %d: gap %+v", s.Step, s.TTFTGap)
		}
		if res.Steps[i].Server == nil || res.Steps[i].Server.Explanation != v.Explanation {
			t.Errorf("step %d: the result and its JSON hold different views", s.Step)
		}
		mu.Lock()
		if progress[i] == nil || progress[i].Server == nil || progress[i].Server.Explanation != v.Explanation {
			t.Errorf("step %d: the progress row lacks the server view", s.Step)
		}
		mu.Unlock()
		t.Logf("step %d (%g req/s): %s; gap %+v", s.Step, s.Rate, v.Explanation, s.TTFTGap)
	}
	// The overloaded step queued on the server, and the explanation says so.
	top := res.Steps[1].Server
	if w := top.Get(servermetrics.Waiting); w == nil || w.Gauge == nil || w.Gauge.Max < 1 {
		t.Errorf("overloaded step: waiting %+v", w)
	}
	if !strings.Contains(top.Explanation, "waiting queue grew from 0 to") {
		t.Errorf("overloaded step's explanation %q names no queue", top.Explanation)
	}
	if w := res.Steps[0].Server.Get(servermetrics.Running); w == nil || w.Gauge.Max > 2 {
		t.Errorf("first step: running %+v above the 2 slots", w)
	}
	hist, _, err := ReadHistory(cfg.HistoryFile, 0)
	if err != nil || len(hist) != 1 {
		t.Fatalf("history: %v, %d", err, len(hist))
	}
	for i, s := range hist[0].Steps {
		if s.Server == nil || s.Server.Explanation != res.Steps[i].Server.Explanation || s.TTFTGap() == nil {
			t.Errorf("history step %d lost its server view: %+v", s.Index, s.Server)
		}
	}
}

// TestServerMetricsFailureNeverFailsTheLadder: an endpoint that cannot be
// read leaves each step a view that says so and why; one that stops
// answering mid-step leaves a partial view; the ladder runs every step.
func TestServerMetricsFailureNeverFailsTheLadder(t *testing.T) {
	defer goleak.VerifyNone(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/metrics"
	ln.Close() // nothing listens there any more

	var n atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1)%3 != 1 { // every step: the start scrape answers, the mark at its window's end and the end scrape fail
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 3\n")
	}))
	defer flaky.Close()

	tests := []struct {
		name, url string
		check     func(t *testing.T, v *servermetrics.View)
	}{
		{"nothing listening", closed, func(t *testing.T, v *servermetrics.View) {
			if !v.Unavailable || !strings.Contains(v.Error, "connection refused") || !strings.HasPrefix(v.Explanation, "server metrics unavailable: ") {
				t.Errorf("view %+v", v)
			}
		}},
		{"end scrape fails", flaky.URL + "/metrics", func(t *testing.T, v *servermetrics.View) {
			if v.Unavailable || !v.Partial || !strings.Contains(v.Error, "HTTP 500") || !strings.Contains(v.Explanation, "no end scrape") {
				t.Errorf("view %+v", v)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := newFixture(t, 4, 1000)
			cfg := baseConfig("sim")
			cfg.Steps = []float64{2, 4}
			cfg.StepDuration = time.Second
			cfg.ServerMetrics = scraper(t, tt.url, 0)
			n.Store(0)
			r := build(t, f, cfg)
			res, err := r.Run(context.Background(), "manual")
			f.close(t)
			if err != nil || res.Aborted || len(res.Steps) != 2 {
				t.Fatalf("ladder: err %v, aborted %v (%s), %d steps", err, res.Aborted, res.AbortReason, len(res.Steps))
			}
			for _, s := range rows(t, res) {
				if s.Server == nil {
					t.Fatalf("step %d: no view", s.Step)
				}
				tt.check(t, s.Server)
				if s.TTFTGap != nil {
					t.Errorf("step %d: a gap without a server TTFT: %+v", s.Step, s.TTFTGap)
				}
				if _, err := json.Marshal(s); err != nil {
					t.Errorf("step %d does not encode: %v", s.Step, err)
				}
			}
		})
	}
}
