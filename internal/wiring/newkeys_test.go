package wiring

import (
	"context"
	"encoding/pem"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/protocol/sse"
)

// TestEventSizeDefault: the configuration's default event size is the SSE
// reader's (one rule, two packages that may not import each other).
func TestEventSizeDefault(t *testing.T) {
	if config.DefaultMaxEventBytes != sse.DefaultMaxEventBytes || config.DefaultTarget().MaxEventBytes != sse.DefaultMaxEventBytes {
		t.Errorf("config default %d, sse default %d", config.DefaultMaxEventBytes, sse.DefaultMaxEventBytes)
	}
	if config.MinMaxBufferedBytes < sse.DefaultMaxEventBytes {
		t.Errorf("limits.max_buffered_bytes may be set below one default-size event")
	}
}

// TestMaxEventBytes: targets[].max_event_bytes reaches the client (a larger
// event ends the stream event_too_large) and may not pass
// limits.max_buffered_bytes.
func TestMaxEventBytes(t *testing.T) {
	big := strings.Repeat("x", 4000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"id\":\"1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", big)
		fmt.Fprint(w, "data: {\"id\":\"1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	outcome := func(maxEvent int) ledger.Result {
		tg := loadTarget(t, fmt.Sprintf("    max_event_bytes: %d\n", maxEvent))
		tg.URL = srv.URL + "/v1"
		c, target, err := Client(tg, ClientOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		start := time.Now()
		return c.Do(context.Background(), target, protocol.Params{Model: "m", Prompt: "hi", MaxTokens: 4}, &ledger.Record{},
			func() time.Duration { return time.Since(start) + 1 }, func() {})
	}
	if r := outcome(1024); r.Outcome != ledger.StreamError || r.Reason != ledger.ReasonEventTooLarge {
		t.Errorf("max_event_bytes 1024, a 4 kB event: %+v, want stream_error/event_too_large", r)
	}
	if r := outcome(8192); r.Outcome != ledger.OK {
		t.Errorf("max_event_bytes 8192, a 4 kB event: %+v, want ok", r)
	}
	// An event sent as one line is held twice (its line, its data): the
	// process-wide bound must hold two of the largest, plus the free step.
	p := write(t, minimal+"    max_event_bytes: 2097152\nlimits: {max_buffered_bytes: 4210687}\n")
	_, err := Load(config.Options{Path: p, Environ: noEnv})
	if err == nil || !strings.Contains(unplaced(err), p+": targets[0].max_event_bytes: 2097152 bytes needs limits.max_buffered_bytes of at least 4210688") {
		t.Errorf("event larger than half the buffer: %v", err)
	}
	if _, err := Load(config.Options{Path: write(t, minimal+"    max_event_bytes: 2097152\nlimits: {max_buffered_bytes: 4210688}\n"), Environ: noEnv}); err != nil {
		t.Errorf("room for the event: %v", err)
	}
}

// TestHTTP1: targets[].http1 keeps the client on HTTP/1.1 where HTTP/2
// would be negotiated.
func TestHTTP1(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Proto", r.Proto)
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	proto := func(http1 bool) int {
		tg := loadTarget(t, fmt.Sprintf("    http1: %v\n    tls: {ca_file: %s}\n", http1, ca))
		tg.URL = srv.URL + "/v1"
		c, target, err := Client(tg, ClientOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		resp, err := c.Get(context.Background(), target, "/models")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.ProtoMajor
	}
	if p := proto(false); p != 2 {
		t.Errorf("http1 false: HTTP/%d, want HTTP/2 (the test server offers it)", p)
	}
	if p := proto(true); p != 1 {
		t.Errorf("http1 true: HTTP/%d, want HTTP/1.1", p)
	}
}

// TestGamma: arrival gamma with burstiness reaches the baseline and the
// ladder: burstier arrivals have gaps of a larger coefficient of variation
// (1/√k).
func TestGamma(t *testing.T) {
	cv := func(k float64) float64 {
		tg := loadTarget(t, fmt.Sprintf("    baseline: {rate: 10, arrival: gamma, burstiness: %g}\n", k))
		seq, err := Arrivals(tg, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		var gaps []float64
		prev := time.Duration(0)
		for range 4000 {
			off, _ := seq.Next()
			gaps = append(gaps, (off - prev).Seconds())
			prev = off
		}
		var sum, sq float64
		for _, g := range gaps {
			sum += g
		}
		mean := sum / float64(len(gaps))
		for _, g := range gaps {
			sq += (g - mean) * (g - mean)
		}
		return math.Sqrt(sq/float64(len(gaps))) / mean
	}
	if lo, hi := cv(4), cv(0.25); !(math.Abs(lo-0.5) < 0.1 && math.Abs(hi-2) < 0.4) {
		t.Errorf("gap CV %.2f at burstiness 4 (want ≈0.5), %.2f at 0.25 (want ≈2)", lo, hi)
	}
	c, err := Load(config.Options{BuiltIn: []byte(minimal + "    ladder: {enabled: true, steps: [1], schedule: {every: 24h}, arrival: gamma, burstiness: 0.5, rate_tolerance: 0.2, lag_confidence: 0.99, lag_hard_factor: 4}\n"), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	lc, _, err := Ladder(c.Targets[0], c.Limits)
	if err != nil {
		t.Fatal(err)
	}
	if lc.Arrival != "gamma" || lc.Burstiness != 0.5 || lc.Validity.RateTolerance != 0.2 {
		t.Errorf("ladder arrival %q burstiness %v rate tolerance %v", lc.Arrival, lc.Burstiness, lc.Validity.RateTolerance)
	}
	if v := lc.Validity; v.Confidence() != 0.99 || v.HardLimit() != 40*time.Millisecond {
		t.Errorf("lag rule: confidence %v, hard limit %v, want 0.99 and 4 × 10ms", v.Confidence(), v.HardLimit())
	}
}
