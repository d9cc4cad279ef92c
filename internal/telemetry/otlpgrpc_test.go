package telemetry

import (
	"context"
	"net"
	"sync"
	"testing"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
)

type grpcReceiver struct {
	colmetricpb.UnimplementedMetricsServiceServer
	mu    sync.Mutex
	names map[string]bool
}

func (g *grpcReceiver) Export(_ context.Context, req *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				if m.GetExponentialHistogram() != nil || m.GetSum() != nil {
					g.names[m.GetName()] = true
				}
			}
		}
	}
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

func TestOTLPGRPCExportReachesAReceiver(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	recv := &grpcReceiver{names: map[string]bool{}}
	gs := grpc.NewServer()
	colmetricpb.RegisterMetricsServiceServer(gs, recv)
	go func() { _ = gs.Serve(l) }()
	defer gs.Stop()

	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://"+l.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_INSECURE", "true")
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "3600000")
	ctx := context.Background()
	mp, err := NewMeterProvider(ctx, nil, nil)
	if err != nil || mp == nil {
		t.Fatalf("NewMeterProvider = %v, %v", mp, err)
	}
	exportFixture(t, mp)
	recv.mu.Lock()
	defer recv.mu.Unlock()
	for _, name := range []string{InstrumentOperationDuration, InstrumentTimeToFirstChunk, InstrumentTokenUsage, InstrumentRequests} {
		if !recv.names[name] {
			t.Errorf("gRPC receiver did not get %s (got %v)", name, recv.names)
		}
	}
}
