package admin

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/telemetry"
)

// TestScrapeRecorderOverHTTP runs the real recorder behind the real
// handler and scrapes it the way Prometheus does with native histograms on:
// protobuf, native buckets and exemplars intact, plus a ledger ring.
func TestScrapeRecorderOverHTTP(t *testing.T) {
	rec, err := telemetry.New(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ring := ledger.NewRing(10, 10)
	l := ledger.New(time.Now(), rec, ring)
	for i := range 20 {
		r := l.Plan(ledger.Meta{Target: "sim", Class: "short", Traffic: ledger.TrafficBaseline}, time.Duration(i+1)*time.Millisecond)
		l.MarkDispatched(r)
		r.FirstContent = r.Planned + time.Duration(100+i)*time.Millisecond
		r.End = r.FirstContent + 50*time.Millisecond
		if err := l.Finish(r, ledger.OK, ledger.ReasonStop, ""); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(Handler(Options{Gatherer: rec.Registry(), Ring: ring}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
	req.Header.Set("Accept", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.6,application/openmetrics-text;version=1.0.0;q=0.5")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	var ttft *dto.MetricFamily
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if mf.GetName() == "llmprobe_time_to_first_token_seconds" {
			ttft = &mf
		}
	}
	if ttft == nil || len(ttft.GetMetric()) != 1 {
		t.Fatalf("TTFT family = %v", ttft)
	}
	h := ttft.GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 20 || h.GetSchema() != 3 || len(h.GetPositiveSpan()) == 0 || len(h.GetBucket()) == 0 {
		t.Errorf("count %d schema %d spans %d classic %d", h.GetSampleCount(), h.GetSchema(), len(h.GetPositiveSpan()), len(h.GetBucket()))
	}
	if len(h.GetExemplars()) == 0 {
		t.Error("no native-histogram exemplars in the protobuf scrape")
	}
	if s := h.GetSampleSum(); s < 20*0.100 || s > 20*0.120 {
		t.Errorf("TTFT sum = %v, want ~2.19s (from the planned time)", s)
	}
	if rec := getReq(t, srv.URL+"/debug/requests?target=sim&n=3"); rec != http.StatusOK {
		t.Errorf("/debug/requests = %d", rec)
	}
}

func getReq(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
