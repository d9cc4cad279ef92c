package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

func TestStartWithoutEndpointsIsPrometheusOnly(t *testing.T) {
	defer goleak.VerifyNone(t)
	noEnv := func(string) (string, bool) { return "", false }
	s, err := Start(context.Background(), StackOptions{OTel: true, Tracing: true, Getenv: noEnv, Build: BuildInfo{Version: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.MeterProvider != nil || s.TracerProvider != nil || s.Tracing.Hook("t", "") != nil {
		t.Error("OTel started without an endpoint")
	}
	if s.Registry == nil || s.Recorder == nil {
		t.Fatal("no registry or recorder")
	}
	s.Recorder.Record(&ledger.Record{Target: "t", Class: "c", Traffic: ledger.TrafficProbe, Planned: 1, Dispatched: 2, End: 3, Outcome: ledger.OK, Reason: ledger.ReasonStop})
	mf := family(t, s.Registry, "llmprobe_requests_total")
	if len(mf.GetMetric()) == 0 {
		t.Error("no requests_total series")
	}
	family(t, s.Registry, "go_goroutines") // Go collector present
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestStartWithEndpointBuildsProviders(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	s, err := Start(context.Background(), StackOptions{OTel: true, Tracing: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.MeterProvider == nil || s.TracerProvider == nil || s.Tracing == nil {
		t.Fatalf("providers not built: %+v", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}
