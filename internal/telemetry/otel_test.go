package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"
)

func collectManual(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithView(ExponentialHistogramView()))
	defer mp.Shutdown(context.Background())
	r, _ := newTestRecorder(t, Options{MeterProvider: mp})
	r.SetEndpoint("sim", Endpoint{Provider: "openai", RequestModel: "m-req", Address: "127.0.0.1", Port: 8000})
	feedFixture(r)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func attrValue(s attribute.Set, k string) (string, bool) {
	v, ok := s.Value(attribute.Key(k))
	return v.String(), ok
}

func TestOTelSemanticConventionInstruments(t *testing.T) {
	ms := collectManual(t)
	for _, name := range []string{InstrumentOperationDuration, InstrumentTimeToFirstChunk, InstrumentTimePerChunk, InstrumentTokenUsage, InstrumentDispatchLag} {
		if _, ok := ms[name]; !ok {
			t.Fatalf("instrument %s missing; have %v", name, keys(ms))
		}
	}
	dur, ok := ms[InstrumentOperationDuration].Data.(metricdata.ExponentialHistogram[float64])
	if !ok {
		t.Fatalf("%s is %T, want an exponential histogram", InstrumentOperationDuration, ms[InstrumentOperationDuration].Data)
	}
	var okCount, errCount uint64
	for _, dp := range dur.DataPoints {
		for k, want := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
			"gen_ai.request.model": "m-req", "server.address": "127.0.0.1", "server.port": "8000"} {
			if got, _ := attrValue(dp.Attributes, k); got != want {
				t.Errorf("duration attribute %s = %q, want %q", k, got, want)
			}
		}
		if et, has := attrValue(dp.Attributes, "error.type"); has {
			errCount += dp.Count
			if et != "rejected" && et != "timeout" {
				t.Errorf("error.type = %q", et)
			}
		} else {
			okCount += dp.Count
		}
	}
	// Three ok records; the rejection and the timeout carry error.type;
	// unsent and censored records are never duration samples.
	if okCount != 3 || errCount != 2 {
		t.Errorf("duration samples ok=%d error=%d, want 3 and 2", okCount, errCount)
	}
	tok := ms[InstrumentTokenUsage].Data.(metricdata.ExponentialHistogram[int64])
	sums := map[string]int64{}
	for _, dp := range tok.DataPoints {
		tt, _ := attrValue(dp.Attributes, "gen_ai.token.type")
		sums[tt] += dp.Sum
	}
	if sums["input"] != 15 || sums["output"] != 8 {
		t.Errorf("token sums = %v, want input 15, output 8", sums)
	}
	chunks := ms[InstrumentTimePerChunk].Data.(metricdata.ExponentialHistogram[float64])
	var n uint64
	for _, dp := range chunks.DataPoints {
		n += dp.Count
	}
	if n != 6 {
		t.Errorf("time_per_output_chunk samples = %d, want 6 (every gap of the ok records)", n)
	}
	req := ms[InstrumentRequests].Data.(metricdata.Sum[int64])
	var total int64
	for _, dp := range req.DataPoints {
		total += dp.Value
	}
	if total != int64(len(fixtureRecords())) {
		t.Errorf("llmprobe.requests total = %d, want %d", total, len(fixtureRecords()))
	}
}

func keys(m map[string]metricdata.Metrics) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// otlpReceiver is a minimal OTLP/HTTP metrics receiver: it decodes the
// protobuf export requests it is sent.
type otlpReceiver struct {
	mu   sync.Mutex
	reqs []*colmetricpb.ExportMetricsServiceRequest
	errs []error
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req colmetricpb.ExportMetricsServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil || r.URL.Path != "/v1/metrics" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		o.errs = append(o.errs, err)
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	o.reqs = append(o.reqs, &req)
	b, _ := proto.Marshal(&colmetricpb.ExportMetricsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// exportFixture records the fixture through mp and shuts mp down, which
// flushes it to its exporter.
func exportFixture(t *testing.T, mp *sdkmetric.MeterProvider) {
	t.Helper()
	r, _ := newTestRecorder(t, Options{MeterProvider: mp})
	feedFixture(r)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := mp.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown (flush): %v", err)
	}
}

func TestOTLPHTTPExportReachesAReceiver(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	recv := &otlpReceiver{}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "3600000") // export only on shutdown
	ctx := context.Background()
	res, err := Resource(ctx, "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	mp, err := NewMeterProvider(ctx, nil, res)
	if err != nil || mp == nil {
		t.Fatalf("NewMeterProvider = %v, %v", mp, err)
	}
	exportFixture(t, mp)
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.errs) > 0 || len(recv.reqs) == 0 {
		t.Fatalf("receiver got %d requests, errors %v", len(recv.reqs), recv.errs)
	}
	seen := map[string]*metricpb.Metric{}
	var service string
	for _, req := range recv.reqs {
		for _, rm := range req.GetResourceMetrics() {
			for _, a := range rm.GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					service = a.GetValue().GetStringValue()
				}
			}
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					seen[m.GetName()] = m
				}
			}
		}
	}
	if service != "llmprobe" {
		t.Errorf("service.name = %q", service)
	}
	m := seen[InstrumentTimeToFirstChunk]
	if m == nil || m.GetExponentialHistogram() == nil {
		t.Fatalf("%s not received as an exponential histogram: %v", InstrumentTimeToFirstChunk, m)
	}
	var count uint64
	for _, dp := range m.GetExponentialHistogram().GetDataPoints() {
		count += dp.GetCount()
	}
	if count != 3 || m.GetUnit() != "s" {
		t.Errorf("TTFC count %d unit %q, want 3 and s", count, m.GetUnit())
	}
}

func TestExportSelectionFromEnvironment(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		enabled bool
		proto   string
		wantErr bool
	}{
		{"off without endpoint", map[string]string{}, false, "http/protobuf", false},
		{"generic endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, "http/protobuf", false},
		{"metrics endpoint, grpc", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, "grpc", false},
		{"signal protocol wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/protobuf"}, true, "http/protobuf", false},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "x", "OTEL_METRICS_EXPORTER": "none"}, false, "http/protobuf", false},
		{"bad protocol", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			if got := MetricsExportEnabled(env); got != tc.enabled {
				t.Errorf("enabled = %v, want %v", got, tc.enabled)
			}
			p, err := Protocol(env, "METRICS")
			if (err != nil) != tc.wantErr || p != tc.proto {
				t.Errorf("protocol = %q, %v; want %q, err %v", p, err, tc.proto, tc.wantErr)
			}
		})
	}
	mp, err := NewMeterProvider(context.Background(), func(string) (string, bool) { return "", false }, nil)
	if mp != nil || err != nil {
		t.Errorf("NewMeterProvider without endpoint = %v, %v; want nil, nil", mp, err)
	}
}
