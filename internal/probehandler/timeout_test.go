package probehandler

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// stallServer answers nothing until the client goes away; with first set
// it sends response headers and one content chunk before it stalls.
func stallServer(t *testing.T, first bool) string {
	return httpServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so the server sees the client go
		if first {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, `data: {"id":"1","model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}`+"\n\n")
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	}))
}

// TestProbeScrapeTimeout: X-Prometheus-Scrape-Timeout-Seconds less
// probe.timeout_offset bounds the probe: a slow target's request ends at
// that deadline, recorded timeout/total, and the answer arrives within the
// scrape timeout (the offset is the margin). The module's timeouts.total
// bounds it when shorter, and alone when no header comes.
func TestProbeScrapeTimeout(t *testing.T) {
	slow, slowMid := stallServer(t, false), stallServer(t, true)
	e := newEnv(t, targetsYAML("slow", slow+"/v1")+modYAML([]string{slow, slowMid}, "m", "{model: x, timeouts: {total: 10s}}",
		"short", "{model: x, timeouts: {total: 300ms}}"))
	tests := []struct {
		name, query, header string
		limit               time.Duration // the probe's timeout
		firstContent        bool
	}{
		{"configured target, scrape timeout", "module=m&target=slow", "1.5", time.Second, false},
		{"URL, mid-stream, scrape timeout", "module=m&target=" + url.QueryEscape(slowMid+"/v1"), "1.5", time.Second, true},
		{"module total shorter than the scrape", "module=short&target=slow", "5", 300 * time.Millisecond, false},
		{"no header: the module's total", "module=short&target=slow", "", 300 * time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(e.records())
			var hdr []string
			if tt.header != "" {
				hdr = []string{ScrapeTimeoutHeader, tt.header}
			}
			start := time.Now()
			fams := e.metrics(t, tt.query, hdr...)
			took := time.Since(start)
			if v := must(t, fams, mOutcome, "outcome", "timeout", "reason", "total"); v != 1 || must(t, fams, mSuccess) != 0 {
				t.Errorf("outcomes %v, want timeout/total", outcomes(fams))
			}
			if d := must(t, fams, mDuration); d < tt.limit.Seconds() {
				t.Errorf("probe_duration_seconds %v: ended before its timeout %v", d, tt.limit)
			}
			if tt.header == "1.5" && took >= 1500*time.Millisecond {
				// The point of the offset: the answer beats Prometheus' own
				// timeout. 0.5s of margin; rerun alone if the machine is loaded.
				t.Errorf("the answer took %v, past the scrape timeout 1.5s", took)
			}
			recs := e.records()[before:]
			if len(recs) != 1 {
				t.Fatalf("%d records", len(recs))
			}
			r := recs[0]
			if r.Outcome != ledger.Timeout || r.Reason != ledger.ReasonTotal || !strings.Contains(r.Error, tt.limit.String()) {
				t.Errorf("record %s/%s %q, want timeout/total naming %v", r.Outcome, r.Reason, r.Error, tt.limit)
			}
			if age := r.End - r.Planned; age < tt.limit {
				t.Errorf("the request ended %v after its planned time, before the %v deadline", age, tt.limit)
			}
			if (r.FirstContent != 0) != tt.firstContent {
				t.Errorf("first content %v, want reached %v", r.FirstContent, tt.firstContent)
			}
			if _, ok := value(fams, mTTFT); ok {
				t.Error("a TTFT for a request that timed out")
			}
		})
	}
}

// TestProbeScrapeAbandoned: when Prometheus gives up on the scrape, the
// probe's request is cancelled (recorded cancelled/interrupted), not left
// running against the target.
func TestProbeScrapeAbandoned(t *testing.T) {
	slow := stallServer(t, false)
	e := newEnv(t, targetsYAML("slow", slow+"/v1")+modYAML(nil, "m", "{timeouts: {total: 30s}}"))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/probe?module=m&target=slow", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("the scrape was answered before its client gave up")
	}
	testutil.Eventually(t, 5*time.Second, "the abandoned probe's record", func() bool { return len(e.records()) == 1 })
	if r := e.records()[0]; r.Outcome != ledger.Cancelled || r.Reason != ledger.ReasonInterrupted {
		t.Errorf("record %s/%s, want cancelled/interrupted", r.Outcome, r.Reason)
	}
}
