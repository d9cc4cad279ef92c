package telemetry

import (
	"context"
	"fmt"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestOTelAttributesBounded: the model a server names in its responses is
// never an OTel attribute (it is server-supplied and could take any number
// of values), so records naming 50 models make one duration data point; and
// a changed Endpoint applies to the records that follow it.
func TestOTelAttributesBounded(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithView(ExponentialHistogramView()))
	defer mp.Shutdown(context.Background())
	r, _ := newTestRecorder(t, Options{MeterProvider: mp})
	ok := func(id uint64, model string) *ledger.Record {
		return &ledger.Record{ID: id, Target: "sim", Class: "short", Traffic: ledger.TrafficBaseline, API: "openai-chat", Model: model,
			Planned: time.Second, Dispatched: time.Second, FirstContent: 2 * time.Second, LastContent: 2 * time.Second, End: 2 * time.Second,
			ContentEvents: 1, Outcome: ledger.OK, Reason: ledger.ReasonStop}
	}
	r.SetEndpoint("sim", Endpoint{RequestModel: "m-req", Address: "a.example", Port: 443})
	for i := range 50 {
		r.Record(ok(uint64(i+1), fmt.Sprintf("server-model-%d", i)))
	}
	r.SetEndpoint("sim", Endpoint{RequestModel: "m-req", Address: "b.example", Port: 443})
	r.Record(ok(51, "server-model-x"))

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != InstrumentOperationDuration {
				continue
			}
			for _, dp := range m.Data.(metricdata.ExponentialHistogram[float64]).DataPoints {
				if v, has := attrValue(dp.Attributes, "gen_ai.response.model"); has {
					t.Errorf("gen_ai.response.model = %q is an attribute", v)
				}
				if v, _ := attrValue(dp.Attributes, "llmprobe.during"); v != "none" {
					t.Errorf("llmprobe.during = %q, want none on a baseline request planned outside any ladder", v)
				}
				addr, _ := attrValue(dp.Attributes, "server.address")
				counts[addr] += dp.Count
			}
		}
	}
	if len(counts) != 2 || counts["a.example"] != 50 || counts["b.example"] != 1 {
		t.Errorf("duration samples by server.address = %v, want a.example 50 and b.example 1", counts)
	}
}
