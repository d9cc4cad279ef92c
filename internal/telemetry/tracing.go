package telemetry

import (
	"context"
	"fmt"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// RequestHook is called by the protocol client just before it sends a probe
// request. It may decorate the request (headers) and returns the context to
// send it with and a function to call exactly once with the request's
// terminal outcome and reason.
type RequestHook func(ctx context.Context, req *http.Request) (context.Context, func(ledger.Outcome, ledger.Reason))

// TracesExportEnabled reports whether an OTLP traces endpoint is set
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT) and
// OTEL_TRACES_EXPORTER is not "none".
func TracesExportEnabled(env Getenv) bool {
	return exportEnabled(env, "TRACES", "OTEL_TRACES_EXPORTER")
}

// NewTracerProvider returns a TracerProvider exporting spans over OTLP (gRPC
// or HTTP by the standard variables) with a batch processor, or (nil, nil)
// when no OTLP endpoint is configured. The sampler follows
// OTEL_TRACES_SAMPLER (parent-based always-on by default).
func NewTracerProvider(ctx context.Context, env Getenv, res *resource.Resource) (*sdktrace.TracerProvider, error) {
	if !TracesExportEnabled(env) {
		return nil, nil
	}
	proto, err := Protocol(env, "TRACES")
	if err != nil {
		return nil, err
	}
	var exp sdktrace.SpanExporter
	if proto == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: create OTLP %s trace exporter: %w", proto, err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp)}
	if res != nil {
		opts = append(opts, sdktrace.WithResource(res))
	}
	return sdktrace.NewTracerProvider(opts...), nil
}

// Tracing starts one client span per probe request and sends W3C
// traceparent (and tracestate) to the target so server-side traces can be
// joined with the ledger (the record's TraceID, and the exemplars).
type Tracing struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// NewTracing returns a Tracing using tp; a nil tp yields nil (tracing off:
// Hook then returns nil and callers skip it).
func NewTracing(tp trace.TracerProvider) *Tracing {
	if tp == nil {
		return nil
	}
	return &Tracing{tracer: tp.Tracer(scopeName), prop: propagation.TraceContext{}}
}

// Hook returns the RequestHook, or nil when t is nil. The span is named
// "<operation> <target>" and carries only bounded attributes: never the URL,
// prompt or key.
func (t *Tracing) Hook(target, operation string) RequestHook {
	if t == nil {
		return nil
	}
	if operation == "" {
		operation = "chat"
	}
	return func(ctx context.Context, req *http.Request) (context.Context, func(ledger.Outcome, ledger.Reason)) {
		ctx, span := t.tracer.Start(ctx, operation+" "+target,
			trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(
				attribute.String("gen_ai.operation.name", operation),
				attribute.String("llmprobe.target", target),
			))
		t.prop.Inject(ctx, propagation.HeaderCarrier(req.Header))
		return ctx, func(o ledger.Outcome, r ledger.Reason) {
			span.SetAttributes(attribute.String("llmprobe.outcome", string(o)), attribute.String("llmprobe.reason", string(r)))
			if o != ledger.OK {
				span.SetAttributes(attribute.String("error.type", string(o)))
				span.SetStatus(codes.Error, string(o))
			}
			span.End()
		}
	}
}
