package dispatch

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// sseServer streams three chunks 5ms apart then [DONE]; on /stall it sends
// headers and a role-only chunk, then nothing until the client goes away.
func sseServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		fmt.Fprint(w, "data: {\"role\":\"assistant\"}\n\n")
		fl.Flush()
		if r.URL.Path == "/stall" {
			<-r.Context().Done()
			return
		}
		for i := range 3 {
			select {
			case <-time.After(5 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
			fmt.Fprintf(w, "data: {\"content\":\"tok%d\"}\n\n", i)
			fl.Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// httpExec is a minimal streaming client: enough to time a real stream.
func httpExec(client *http.Client, base string, now func() time.Duration, path func(*ledger.Record) string) Exec {
	return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path(rec), nil)
		if err != nil {
			dispatched()
			return ledger.Result{Outcome: ledger.TransportError, Reason: ledger.ReasonTransportOther, Err: "cannot build request"}
		}
		dispatched()
		resp, err := client.Do(req)
		if err != nil {
			return ledger.Result{Outcome: ledger.TransportError, Reason: ledger.ReasonTransportOther, Err: "request failed"}
		}
		defer resp.Body.Close()
		rec.Headers = now()
		rec.Status = resp.StatusCode
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "data: [DONE]":
				return ledger.Result{Outcome: ledger.OK, Reason: ledger.ReasonStop}
			case strings.Contains(line, `"content"`):
				if rec.FirstContent == 0 {
					rec.FirstContent = now()
				}
				rec.ContentEvents++
			}
		}
		return ledger.Result{Outcome: ledger.StreamError, Reason: ledger.ReasonTruncated}
	}
}

func TestOpenAgainstStreamingServer(t *testing.T) {
	srv := sseServer(t)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	g, led, col := newRun(t)
	exec := httpExec(client, srv.URL, led.Now, func(r *ledger.Record) string {
		if r.ID%5 == 0 {
			return "/stall"
		}
		return "/ok"
	})
	if err := g.Open(context.Background(), OpenConfig{
		Arrivals: seq(t, schedule.Spec{Seed: 4}, schedule.Step{Rate: 150}), Window: 200 * time.Millisecond, Exec: exec,
	}); err != nil {
		t.Fatal(err)
	}
	// Let every answering stream end, then censor the stalled ones at once.
	testutil.Eventually(t, 10*time.Second, "the answering streams end", func() bool {
		c := led.Counts()
		return c.Dispatched == c.Planned && c.Finished == c.Planned-int(c.Planned/5)
	})
	censored := g.Drain(context.Background(), 0)
	c := checkLedger(t, led, col)
	stalls := 0
	for _, r := range col.all() {
		if r.ID%5 == 0 {
			stalls++
			if r.Outcome != ledger.Censored {
				t.Errorf("stalled record %d: %s/%s, want censored", r.ID, r.Outcome, r.Reason)
			}
			continue
		}
		if r.Outcome != ledger.OK || r.ContentEvents != 3 {
			t.Errorf("record %d: %s/%s with %d content events, want ok with 3", r.ID, r.Outcome, r.Reason, r.ContentEvents)
		}
		ttft, ok := r.TTFT()
		if !ok || r.Headers < r.Dispatched || r.FirstContent < r.Headers || ttft < 5*time.Millisecond {
			t.Errorf("record %d: boundaries out of order (dispatched %v headers %v first content %v)", r.ID, r.Dispatched, r.Headers, r.FirstContent)
		}
	}
	if c.Planned == 0 || censored != stalls {
		t.Errorf("planned %d, censored %d, stalled %d", c.Planned, censored, stalls)
	}
}
