package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Instrument names. The gen_ai.* ones follow the OpenTelemetry GenAI
// semantic conventions (client inference metrics, development status).
const (
	InstrumentOperationDuration = "gen_ai.client.operation.duration"
	InstrumentTimeToFirstChunk  = "gen_ai.client.operation.time_to_first_chunk"
	InstrumentTimePerChunk      = "gen_ai.client.operation.time_per_output_chunk"
	InstrumentTokenUsage        = "gen_ai.client.token.usage"
	InstrumentRequests          = "llmprobe.requests"
	InstrumentRequestsGood      = "llmprobe.requests.good"
	InstrumentDispatchLag       = "llmprobe.dispatch.lag"
	InstrumentTimePerToken      = "llmprobe.time_per_output_token"
)

const scopeName = "github.com/llmprobe/llmprobe/internal/telemetry"

// otelInstruments are the OTel side of the Recorder.
type otelInstruments struct {
	duration, ttfc, chunk, lag, tpot metric.Float64Histogram
	tokens                           metric.Int64Histogram
	requests, good, checks           metric.Int64Counter
	path                             otelPath
}

func newOtelInstruments(mp metric.MeterProvider) (*otelInstruments, error) {
	m := mp.Meter(scopeName)
	var in otelInstruments
	var errs []error
	f := func(name, unit, desc string) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return h
	}
	in.duration = f(InstrumentOperationDuration, "s", "GenAI operation duration, from the planned send time to the end of the stream.")
	in.ttfc = f(InstrumentTimeToFirstChunk, "s", "Time from the planned send time to the first chunk with visible content.")
	in.chunk = f(InstrumentTimePerChunk, "s", "Time between consecutive content chunks, for each chunk after the first.")
	in.lag = f(InstrumentDispatchLag, "s", "Dispatch time minus planned time.")
	in.tpot = f(InstrumentTimePerToken, "s", "(last content - first content) / (output tokens - 1), from server usage.")
	var err error
	in.tokens, err = m.Int64Histogram(InstrumentTokenUsage, metric.WithUnit("{token}"), metric.WithDescription("Input and output tokens, from the server's usage."))
	errs = append(errs, err)
	in.requests, err = m.Int64Counter(InstrumentRequests, metric.WithUnit("{request}"), metric.WithDescription("Terminal outcomes of planned arrivals."))
	errs = append(errs, err)
	in.good, err = m.Int64Counter(InstrumentRequestsGood, metric.WithUnit("{request}"), metric.WithDescription("Requests ok and within their class's gates."))
	errs = append(errs, err)
	in.path, err = newOtelPath(m)
	errs = append(errs, err)
	in.checks, err = newOtelChecks(m)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("telemetry: create OTel instruments: %w", err)
	}
	return &in, nil
}

// OperationName maps an API name to gen_ai.operation.name.
func OperationName(api string) string {
	if api == "openai-completions" {
		return "text_completion"
	}
	return "chat"
}

// ProviderName maps an API name to gen_ai.provider.name.
func ProviderName(api string) string {
	switch {
	case strings.HasPrefix(api, "anthropic"):
		return "anthropic"
	case strings.HasPrefix(api, "openai"), api == "":
		return "openai"
	}
	return api
}

// otelSeries holds the attribute sets of one (target, class, traffic, during),
// built once: recording a request then sorts and allocates no attributes.
// The GenAI attributes come from the target's Endpoint and configuration
// only (never from what the server sends, such as the response model).
type otelSeries struct {
	own, gen, tokensIn, tokensOut metric.MeasurementOption
	requests                      map[reqKey]metric.MeasurementOption
	failed                        map[ledger.Outcome]metric.MeasurementOption
	path                          otelPathSeries
}

func newOtelSeries(k seriesKey, api string, ep Endpoint) *otelSeries {
	op := ep.Operation
	if op == "" {
		op = OperationName(api)
	}
	prov := ep.Provider
	if prov == "" {
		prov = ProviderName(api)
	}
	own := []attribute.KeyValue{
		attribute.String("llmprobe.target", k.target),
		attribute.String("llmprobe.class", k.class),
		attribute.String("llmprobe.traffic", string(k.traffic)),
		attribute.String("llmprobe.during", k.during),
	}
	gen := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", op),
		attribute.String("gen_ai.provider.name", prov),
	}
	if ep.RequestModel != "" {
		gen = append(gen, attribute.String("gen_ai.request.model", ep.RequestModel))
	}
	if ep.Address != "" {
		gen = append(gen, attribute.String("server.address", ep.Address))
		if ep.Port > 0 {
			gen = append(gen, attribute.Int("server.port", ep.Port))
		}
	}
	gen = append(gen, own...)
	with := func(base []attribute.KeyValue, extra ...attribute.KeyValue) metric.MeasurementOption {
		all := make([]attribute.KeyValue, 0, len(base)+len(extra))
		return metric.WithAttributeSet(attribute.NewSet(append(append(all, base...), extra...)...))
	}
	s := &otelSeries{
		own: with(own), gen: with(gen),
		tokensIn:  with(gen, attribute.String("gen_ai.token.type", "input")),
		tokensOut: with(gen, attribute.String("gen_ai.token.type", "output")),
		requests:  map[reqKey]metric.MeasurementOption{},
		failed:    map[ledger.Outcome]metric.MeasurementOption{},
		path:      newOtelPathSeries(k.target),
	}
	for _, o := range ledger.Outcomes {
		s.failed[o] = with(gen, attribute.String("error.type", string(o)))
		for _, r := range ledger.ReasonsFor(o) {
			s.requests[reqKey{o, r}] = with(own, attribute.String("llmprobe.outcome", string(o)), attribute.String("llmprobe.reason", string(r)))
		}
	}
	return s
}

func (in *otelInstruments) record(s *otelSeries, r *ledger.Record, good bool) {
	ctx := context.Background()
	req, ok := s.requests[reqKey{r.Outcome, r.Reason}]
	if !ok { // a pair outside the closed set still counts
		req = metric.WithAttributeSet(attribute.NewSet(
			attribute.String("llmprobe.target", r.Target), attribute.String("llmprobe.class", r.Class),
			attribute.String("llmprobe.traffic", string(r.Traffic)), attribute.String("llmprobe.during", r.DuringLabel()),
			attribute.String("llmprobe.outcome", string(r.Outcome)), attribute.String("llmprobe.reason", string(r.Reason))))
	}
	in.requests.Add(ctx, 1, req)
	in.path.record(&s.path, r)
	if lag, ok := r.DispatchLag(); ok {
		in.lag.Record(ctx, lag.Seconds(), s.own)
	}
	if r.Usage.Known {
		in.tokens.Record(ctx, int64(r.Usage.Prompt), s.tokensIn)
		in.tokens.Record(ctx, int64(r.Usage.Completion), s.tokensOut)
	}
	// Durations: ok requests, and sent failures with error.type; never
	// unsent (no request) or censored (its age is a lower bound, not a sample).
	if r.Outcome == ledger.Unsent || r.Outcome == ledger.Censored {
		return
	}
	if r.Outcome != ledger.OK {
		if v, ok := r.E2E(); ok {
			in.duration.Record(ctx, v.Seconds(), s.failed[r.Outcome])
		}
		return
	}
	if good {
		in.good.Add(ctx, 1, s.own)
	}
	if v, ok := r.E2E(); ok {
		in.duration.Record(ctx, v.Seconds(), s.gen)
	}
	if v, ok := r.TTFT(); ok {
		in.ttfc.Record(ctx, v.Seconds(), s.gen)
	}
	if v, ok := r.TPOT(); ok {
		in.tpot.Record(ctx, v.Seconds(), s.gen)
	}
	for _, g := range r.ChunkGaps {
		in.chunk.Record(ctx, g.Seconds(), s.gen)
	}
}

// ExponentialHistogramView makes every histogram a base-2 exponential
// histogram (160 buckets, so OTLP receivers such as Prometheus store native
// histograms).
func ExponentialHistogramView() sdkmetric.View {
	return sdkmetric.NewView(
		sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: nativeMaxBuckets, MaxScale: 20}},
	)
}

// Resource describes llmprobe to OTel backends: service.name (overridable
// with OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES), service.version and the SDK.
func Resource(ctx context.Context, version string, extra ...attribute.KeyValue) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", "llmprobe")}
	if version != "" {
		attrs = append(attrs, attribute.String("service.version", version))
	}
	attrs = append(attrs, extra...)
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("telemetry: build OTel resource: %w", err)
	}
	return res, nil
}

// Getenv looks up an environment variable; os.LookupEnv in production.
type Getenv func(string) (string, bool)

// MetricsExportEnabled reports whether an OTLP metrics endpoint is set
// (OTEL_EXPORTER_OTLP_METRICS_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT) and
// OTEL_METRICS_EXPORTER is not "none".
func MetricsExportEnabled(env Getenv) bool {
	return exportEnabled(env, "METRICS", "OTEL_METRICS_EXPORTER")
}

func exportEnabled(env Getenv, signal, exporterVar string) bool {
	if env == nil {
		env = os.LookupEnv
	}
	if v, _ := env(exporterVar); strings.EqualFold(strings.TrimSpace(v), "none") {
		return false
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if v, ok := env(k); ok && strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}

// Protocol returns the OTLP protocol for a signal ("METRICS" or "TRACES")
// from OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL:
// "grpc" or "http/protobuf" (the default, as the specification says).
func Protocol(env Getenv, signal string) (string, error) {
	if env == nil {
		env = os.LookupEnv
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		v, ok := env(k)
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		switch p := strings.ToLower(strings.TrimSpace(v)); p {
		case "grpc", "http/protobuf":
			return p, nil
		default:
			return "", fmt.Errorf("telemetry: %s=%q: want grpc or http/protobuf", k, v)
		}
	}
	return "http/protobuf", nil
}

// NewMeterProvider returns a MeterProvider exporting over OTLP with a
// periodic reader (interval and timeout from OTEL_METRIC_EXPORT_INTERVAL /
// OTEL_METRIC_EXPORT_TIMEOUT), base-2 exponential histograms and res. The
// exporter (gRPC or HTTP) and its endpoint, headers, TLS and compression
// come from the standard OTEL_EXPORTER_OTLP_* variables. It returns
// (nil, nil) when no OTLP endpoint is configured: OTel export is off.
// Call Shutdown on the provider to flush at exit.
func NewMeterProvider(ctx context.Context, env Getenv, res *resource.Resource, extra ...sdkmetric.Option) (*sdkmetric.MeterProvider, error) {
	if !MetricsExportEnabled(env) {
		return nil, nil
	}
	proto, err := Protocol(env, "METRICS")
	if err != nil {
		return nil, err
	}
	var exp sdkmetric.Exporter
	if proto == "grpc" {
		exp, err = otlpmetricgrpc.New(ctx)
	} else {
		exp, err = otlpmetrichttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: create OTLP %s metric exporter: %w", proto, err)
	}
	opts := []sdkmetric.Option{
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)),
		sdkmetric.WithView(ExponentialHistogramView()),
	}
	if res != nil {
		opts = append(opts, sdkmetric.WithResource(res))
	}
	return sdkmetric.NewMeterProvider(append(opts, extra...)...), nil
}
