package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

func TestHookInjectsTraceparentAndEndsSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	hook := NewTracing(tp).Hook("sim", "chat")

	var gotHeader string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHeader = r.Header.Get("traceparent")
	}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, done := hook(context.Background(), req)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	done(ledger.Timeout, ledger.ReasonIdle)

	id := traceID(ctx)
	if len(id) != 32 {
		t.Fatalf("TraceID = %q", id)
	}
	// traceparent: version-traceid-spanid-flags
	if parts := strings.Split(gotHeader, "-"); len(parts) != 4 || parts[1] != id {
		t.Errorf("server saw traceparent %q, want trace id %s", gotHeader, id)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("spans = %d, want 1", len(spans))
	}
	s := spans[0]
	if s.Name != "chat sim" || s.SpanContext.TraceID().String() != id || s.Status.Description != "timeout" {
		t.Errorf("span = %q trace %s status %+v", s.Name, s.SpanContext.TraceID(), s.Status)
	}
	for _, a := range s.Attributes {
		if strings.Contains(a.Value.String(), "127.0.0.1") {
			t.Errorf("span attribute %s leaks the target URL", a.Key)
		}
	}
}

func TestTracingOff(t *testing.T) {
	if h := NewTracing(nil).Hook("sim", ""); h != nil {
		t.Error("nil provider must yield a nil hook")
	}
	if id := traceID(context.Background()); id != "" {
		t.Errorf("TraceID without span = %q", id)
	}
	tp, err := NewTracerProvider(context.Background(), func(string) (string, bool) { return "", false }, nil)
	if tp != nil || err != nil {
		t.Errorf("NewTracerProvider without endpoint = %v, %v", tp, err)
	}
}

// traceID is how the protocol client reads the span's trace id into the
// record's TraceID: the hex id of the span in ctx, or "" when there is none.
func traceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.HasTraceID() {
		return ""
	}
	return sc.TraceID().String()
}
