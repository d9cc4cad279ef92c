package telemetry

import (
	"context"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/attribute"

	"github.com/prometheus/client_golang/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// StackOptions choose what Start builds.
type StackOptions struct {
	Build   BuildInfo
	OTel    bool   // export metrics over OTLP (still off when no endpoint is set)
	Tracing bool   // export spans over OTLP and send traceparent (off when no endpoint is set)
	Getenv  Getenv // os.LookupEnv by default
	// Region labels every llmprobe_* series (region) and the OTel resource
	// (cloud.region); "" = none.
	Region string
	// Options are passed to New (Registerer, Region, Build); MeterProvider
	// is set by Start.
	Options Options
}

// Stack is the daemon's telemetry: a Prometheus registry, the Recorder, and
// the optional OTel providers.
type Stack struct {
	Registry       *prometheus.Registry // nil when Options.Registerer was given
	Recorder       *Recorder
	MeterProvider  *sdkmetric.MeterProvider // nil when OTel metrics are off
	TracerProvider *sdktrace.TracerProvider // nil when tracing is off
	Tracing        *Tracing                 // nil when tracing is off; its Hook is then nil
}

// Start builds the telemetry stack. Call Shutdown to flush OTel exporters.
func Start(ctx context.Context, o StackOptions) (*Stack, error) {
	s := &Stack{}
	var res *resource.Resource
	if o.OTel || o.Tracing {
		var extra []attribute.KeyValue
		if o.Region != "" {
			extra = append(extra, attribute.String("cloud.region", o.Region))
		}
		r, err := Resource(ctx, o.Build.Version, extra...)
		if err != nil {
			return nil, err
		}
		res = r
	}
	if o.OTel {
		mp, err := NewMeterProvider(ctx, o.Getenv, res)
		if err != nil {
			return nil, err
		}
		s.MeterProvider = mp
	}
	if o.Tracing {
		tp, err := NewTracerProvider(ctx, o.Getenv, res)
		if err != nil {
			_ = s.Shutdown(ctx)
			return nil, err
		}
		s.TracerProvider = tp
		if tp != nil {
			s.Tracing = NewTracing(tp)
		}
	}
	opts := o.Options
	if opts.Region == "" {
		opts.Region = o.Region
	}
	opts.Build = o.Build
	if s.MeterProvider != nil {
		opts.MeterProvider = s.MeterProvider
	}
	rec, err := New(opts)
	if err != nil {
		_ = s.Shutdown(ctx)
		return nil, err
	}
	s.Recorder, s.Registry = rec, rec.Registry()
	return s, nil
}

// Shutdown flushes and stops the OTel providers (a final export).
func (s *Stack) Shutdown(ctx context.Context) error {
	var errs []error
	if s.MeterProvider != nil {
		if err := s.MeterProvider.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: shut down meter provider: %w", err))
		}
	}
	if s.TracerProvider != nil {
		if err := s.TracerProvider.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: shut down tracer provider: %w", err))
		}
	}
	return errors.Join(errs...)
}
