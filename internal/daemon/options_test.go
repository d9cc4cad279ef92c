package daemon

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/telemetry"
)

// TestTargetOptions: per-target retries and cancellation injection reach
// the baseline streams.
func TestTargetOptions(t *testing.T) {
	cases := []struct {
		name  string
		mode  int32
		extra string
		check func(t *testing.T, recs []seen)
	}{
		{
			name: "retries", mode: mode503,
			extra: "    retries: {max_attempts: 2, backoff: 10ms, max_backoff: 10ms}\n",
			check: func(t *testing.T, recs []seen) {
				first, second := 0, 0
				for _, s := range recs {
					switch s.attempt {
					case 1:
						first++
					case 2:
						second++
					default:
						t.Fatalf("attempt %d with max_attempts 2", s.attempt)
					}
				}
				if first < 5 || second < first/2 {
					t.Errorf("first attempts %d, second %d: rejected requests should be retried once", first, second)
				}
			},
		},
		{
			name: "cancellation", mode: modeStall,
			extra: "    cancellation: {fraction: 1, delay: 50ms}\n",
			check: func(t *testing.T, recs []seen) {
				injected := 0
				for _, s := range recs {
					if s.outcome == ledger.Cancelled && s.reason == ledger.ReasonInjected {
						injected++
					}
				}
				if injected < 5 {
					t.Errorf("%d of %d requests cancelled/injected with fraction 1: %s", injected, len(recs), summarize(recs))
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeTarget(t)
			fake.mode.Store(tc.mode)
			sink := &recSink{}
			r := startDaemon(t, loadConfig(t, configYAML("200ms", targetYAML("t1", fake.url, 20, tc.extra))),
				func(o *Options) { o.Sinks = []ledger.Sink{sink} })
			time.Sleep(800 * time.Millisecond)
			if err := r.stop(t); err != nil {
				t.Fatal(err)
			}
			if err := r.d.led.Verify(); err != nil {
				t.Fatal(err)
			}
			tc.check(t, sink.where(func(s seen) bool { return s.outcome != ledger.Unsent && s.outcome != ledger.Censored }))
		})
	}
}

// TestTracing: with Options.Tracing every probe request gets a client span,
// sends traceparent to the target, and its record carries the trace id.
func TestTracing(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	fake := newFakeTarget(t)
	sink := &recSink{}
	r := startDaemon(t, loadConfig(t, configYAML("1s", targetYAML("t1", fake.url, 20, ""))),
		func(o *Options) { o.Tracing = telemetry.NewTracing(tp); o.Sinks = []ledger.Sink{sink} })
	waitFor(t, 5*time.Second, "ok requests", func() bool {
		return sink.count(func(s seen) bool { return s.outcome == ledger.OK }) >= 5
	})
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	sent := sink.where(func(s seen) bool { return s.outcome != ledger.Unsent })
	for _, s := range sent {
		if s.traceID == "" {
			t.Fatalf("a %s record without a trace id", s.outcome)
		}
	}
	if got := fake.traced.Load(); got != fake.hits.Load() || got == 0 {
		t.Errorf("%d of %d requests carried traceparent", got, fake.hits.Load())
	}
	if spans := len(exp.GetSpans()); spans != len(sent) {
		t.Errorf("%d spans for %d requests sent", spans, len(sent))
	}
}
