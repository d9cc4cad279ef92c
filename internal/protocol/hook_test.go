package protocol

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// The per-request hook sees the request before it is sent, its context
// carries to the transport, the trace id lands in the record, and the hook
// learns the outcome.
func TestDoHook(t *testing.T) {
	var gotHeader string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHeader = r.Header.Get("X-Hooked")
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	}))
	defer srv.Close()
	c, err := NewClient(ClientOptions{NoProxy: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	tid, _ := trace.TraceIDFromHex("0102030405060708090a0b0c0d0e0f10")
	sid, _ := trace.SpanIDFromHex("0102030405060708")
	var outcome ledger.Outcome
	tgt := Target{Base: srv.URL, Adapter: OpenAIChat{}, Hook: func(ctx context.Context, req *http.Request) (context.Context, func(ledger.Outcome, ledger.Reason)) {
		req.Header.Set("X-Hooked", "yes")
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
		return trace.ContextWithSpanContext(ctx, sc), func(o ledger.Outcome, _ ledger.Reason) { outcome = o }
	}}
	start := time.Now()
	now := func() time.Duration { return time.Since(start) + 1 }
	rec := &ledger.Record{}
	res := c.Do(context.Background(), tgt, Params{Model: "m", MaxTokens: 4}, rec, now, func() { rec.Dispatched = now() })
	if res.Outcome != ledger.OK || outcome != ledger.OK {
		t.Fatalf("result %+v, hook saw %q", res, outcome)
	}
	if gotHeader != "yes" {
		t.Fatal("the hook's header did not reach the server")
	}
	if rec.TraceID != tid.String() {
		t.Fatalf("trace id %q, want %q", rec.TraceID, tid)
	}
}
