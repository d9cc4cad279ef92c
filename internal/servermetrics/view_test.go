package servermetrics

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestFixtureWindows folds recorded start and end expositions of vLLM,
// SGLang and TGI and checks the server view against the deltas the
// fixtures were written with (the quantiles worked out by hand from the
// bucket deltas).
func TestFixtureWindows(t *testing.T) {
	type gauge struct{ start, max float64 }
	type hist struct{ count, p50, p95, p99 float64 }
	tests := []struct {
		name        string
		start, end  string
		flavour     Flavour // detected
		gauges      map[Role]gauge
		hists       map[Role]hist
		counters    map[Role]float64 // increase over the 60 s window
		missing     []string
		explanation string
	}{
		{
			name: "vllm", start: "vllm_start.prom", end: "vllm_end.prom", flavour: VLLM,
			gauges: map[Role]gauge{Running: {3, 64}, Waiting: {0, 37}, KVCache: {0.12, 0.98}},
			hists: map[Role]hist{
				// 50 in (0.04,0.06], 45 in (0.06,0.08], 5 in (0.25,0.5]
				TTFT: {100, 0.06, 0.08, 0.45},
				// 900 in (0.025,0.05], 100 in (0.05,0.075]
				ITL: {1000, 0.025 + 0.025*500/900, 0.0625, 0.0725},
				// 60 in (0.025,0.05], 40 in (0.05,0.075]
				TPOT: {100, 0.025 + 0.025*50/60, 0.05 + 0.025*35/40, 0.05 + 0.025*39/40},
				// 100 in (2.5,5]
				E2E: {100, 3.75, 4.875, 4.975},
				// 10 in [0,0.001], 40 in (0.08,0.1], 40 in (0.1,0.25], 10 in (0.25,0.5]
				QueueTime: {100, 0.1, 0.375, 0.475},
			},
			// finished_reason stop +80, length +20, abort +0: summed over the three series
			counters:    map[Role]float64{Finished: 100, GenTokens: 25600, Preemptions: 5},
			explanation: "waiting queue grew from 0 to 37; running up to 64; KV cache up to 98 %; server TTFT p95 80ms (n=100); server ITL p95 62.5ms (n=1000); server queue time p95 375ms (n=100); 5 preemptions; prefix cache hit 31 % of 100000 prompt tokens (31000)",
		},
		{
			name: "sglang", start: "sglang_start.prom", end: "sglang_end.prom", flavour: SGLang,
			gauges: map[Role]gauge{Running: {12, 48}, Waiting: {0, 23}, KVCache: {0.41, 0.97}},
			hists: map[Role]hist{
				TTFT: {40, 0.6, 0.78, 0.6 + 0.2*19.6/20},
				ITL:  {100, 0.0125, 0.01475, 0.01495},
				E2E:  {40, 4.0 + 2*0.5, 4.0 + 2*0.95, 4.0 + 2*0.99},
				TPOT: {40, 0.0125, 0.01475, 0.01495},
			},
			counters:    map[Role]float64{Finished: 40, GenTokens: 52000},
			explanation: "waiting queue grew from 0 to 23; running up to 48; KV cache up to 97 %; server TTFT p95 780ms (n=40); server ITL p95 14.8ms (n=100)",
		},
		{
			name: "tgi", start: "tgi_start.prom", end: "tgi_end.prom", flavour: TGI,
			gauges: map[Role]gauge{Running: {4, 32}, Waiting: {0, 5}},
			hists: map[Role]hist{
				QueueTime: {30, 0.08649755859375 + 0.043248779296875*0.5, 0.08649755859375 + 0.043248779296875*0.95, 0.08649755859375 + 0.043248779296875*0.99},
				TPOT:      {30, 0.0170859375 + 0.00854296875*0.5, 0.0170859375 + 0.00854296875*0.95, 0.0170859375 + 0.00854296875*0.99},
				E2E:       {30, 1.4778918800354004 + 0.7389459400177002*0.5, 1.4778918800354004 + 0.7389459400177002*0.95, 1.4778918800354004 + 0.7389459400177002*0.99},
			},
			counters:    map[Role]float64{Finished: 30},
			explanation: "waiting queue grew from 0 to 5; running up to 32; server TPOT p95 25.2ms (n=30); server queue time p95 128ms (n=30)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := window(t, Auto, nil, time.Minute, string(fixture(t, tt.start)), string(fixture(t, tt.end)))
			if v.Flavour != tt.flavour {
				t.Fatalf("flavour %q, want %q", v.Flavour, tt.flavour)
			}
			if v.Scrapes != 2 || v.Seconds != 60 || !v.Start.Equal(t0) || !v.End.Equal(t0.Add(time.Minute)) {
				t.Errorf("window: %d scrapes, %v s, %v–%v", v.Scrapes, v.Seconds, v.Start, v.End)
			}
			for r, g := range tt.gauges {
				s := get(t, v, r)
				if s.Gauge == nil || s.Gauge.Start != g.start || s.Gauge.Max != g.max || s.Gauge.Last != g.max || s.Gauge.Samples != 2 {
					t.Errorf("%s: %+v, want start %v max %v", r, s.Gauge, g.start, g.max)
				}
			}
			for r, h := range tt.hists {
				quantiles(t, get(t, v, r), h.count, h.p50, h.p95, h.p99)
			}
			for r, inc := range tt.counters {
				c := get(t, v, r).Counter
				if c == nil || !near(c.Increase, inc) || !near(c.Rate, inc/60) || c.Resets != 0 || c.LowerBound {
					t.Errorf("%s: %+v, want increase %v", r, c, inc)
				}
			}
			for _, s := range v.Stats {
				if s.Invalid != 0 || len(s.Notes) != 0 {
					t.Errorf("%s: invalid %d, notes %q", s.Metric, s.Invalid, s.Notes)
				}
			}
			if len(v.Missing) != 0 {
				t.Errorf("missing %q", v.Missing)
			}
			if v.Explanation != tt.explanation {
				t.Errorf("explanation\n got %q\nwant %q", v.Explanation, tt.explanation)
			}
		})
	}
}

// TestKnownNameFallbacks: the older vLLM KV-cache and ITL names are used
// when the newer are absent, a counter is found under either spelling, and
// the first name present wins when both are.
func TestKnownNameFallbacks(t *testing.T) {
	old := func(kv, tpot float64) string {
		return `# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="m"} ` + num(kv) + `
# TYPE vllm:time_per_output_token_seconds histogram
vllm:time_per_output_token_seconds_bucket{model_name="m",le="0.1"} ` + num(tpot) + `
vllm:time_per_output_token_seconds_bucket{model_name="m",le="+Inf"} ` + num(tpot) + `
vllm:time_per_output_token_seconds_sum{model_name="m"} 1
vllm:time_per_output_token_seconds_count{model_name="m"} ` + num(tpot) + `
`
	}
	v := window(t, Auto, nil, time.Second, old(0.2, 10), old(0.5, 30))
	if s := get(t, v, KVCache); s.Metric != "vllm:gpu_cache_usage_perc" || s.Gauge.Max != 0.5 {
		t.Errorf("kv: %+v", s)
	}
	if s := get(t, v, ITL); s.Metric != "vllm:time_per_output_token_seconds" || s.Histogram.Count != 20 {
		t.Errorf("itl: %+v", s)
	}
	both := `# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc 0.7
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc 0.1
`
	if s := get(t, window(t, VLLM, nil, time.Second, both, both), KVCache); s.Metric != "vllm:kv_cache_usage_perc" || s.Gauge.Max != 0.7 {
		t.Errorf("both names: %+v", s)
	}
	// OpenMetrics names a counter family without _total.
	om := func(n int) string {
		return "# TYPE vllm:request_success counter\nvllm:request_success_total " + num(float64(n)) + "\n# EOF\n"
	}
	a := NewAccumulator(VLLM, nil)
	for i, n := range []int{5, 9} {
		e, err := Parse([]byte(om(n)), "application/openmetrics-text; version=1.0.0; charset=utf-8")
		if err != nil {
			t.Fatal(err)
		}
		e.At = t0.Add(time.Duration(i) * time.Second)
		a.Add(e)
	}
	if s := a.View().Get(Finished); s == nil || s.Counter.Increase != 4 {
		t.Errorf("OpenMetrics counter: %+v", s)
	}
}

// TestSamplesInBetween: gauges take min/max/last over every sample, and
// counters and histograms sum their increases across samples.
func TestSamplesInBetween(t *testing.T) {
	text := func(waiting, kv, success float64, ttft [3]float64) string {
		return `# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0"} ` + num(waiting) + `
vllm:num_requests_waiting{engine="1"} 1
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0"} ` + num(kv) + `
vllm:kv_cache_usage_perc{engine="1"} 0.5
# TYPE vllm:request_success_total counter
vllm:request_success_total ` + num(success) + `
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.1"} ` + num(ttft[0]) + `
vllm:time_to_first_token_seconds_bucket{le="1"} ` + num(ttft[1]) + `
vllm:time_to_first_token_seconds_bucket{le="+Inf"} ` + num(ttft[2]) + `
vllm:time_to_first_token_seconds_sum 1
vllm:time_to_first_token_seconds_count ` + num(ttft[2]) + `
`
	}
	v := window(t, VLLM, nil, 10*time.Second,
		text(0, 0.1, 100, [3]float64{10, 10, 10}),
		text(45, 0.99, 150, [3]float64{10, 50, 50}),
		text(37, 0.98, 180, [3]float64{10, 60, 61}),
	)
	// Waiting is summed across engines (engine 1 holds 1 throughout);
	// KV-cache usage takes the fullest engine.
	if g := get(t, v, Waiting).Gauge; g.Start != 1 || g.Min != 1 || g.Max != 46 || g.Last != 38 || g.Samples != 3 {
		t.Errorf("waiting: %+v", g)
	}
	if s := get(t, v, Waiting); s.Series != 2 || s.Aggregation != "sum" {
		t.Errorf("waiting: %+v", s)
	}
	if s := get(t, v, KVCache); s.Gauge.Start != 0.5 || s.Gauge.Max != 0.99 || s.Gauge.Last != 0.98 || s.Aggregation != "max" {
		t.Errorf("kv: %+v", s)
	}
	if c := get(t, v, Finished).Counter; c.Increase != 80 || !near(c.Rate, 4) {
		t.Errorf("finished: %+v", c)
	}
	// 40 then 10 observations in (0.1,1], 1 above 1.
	h := get(t, v, TTFT).Histogram
	if h.Count != 51 || h.P99 == nil || !h.P99.LowerBound || h.P99.Value != 1 {
		t.Errorf("ttft: %+v p99 %+v", h, h.P99)
	}
	if !near(h.P50.Value, 0.1+0.9*25.5/50) {
		t.Errorf("ttft p50 %+v", h.P50)
	}
	if !h.P95.LowerBound && !near(h.P95.Value, 0.1+0.9*48.45/50) {
		t.Errorf("ttft p95 %+v", h.P95)
	}
	want := "waiting queue grew from 1 to 46 (38 at the end); KV cache up to 99 %; server TTFT p95 972ms (n=51)"
	if v.Explanation != want {
		t.Errorf("explanation\n got %q\nwant %q", v.Explanation, want)
	}
}

// TestCounterReset: a counter (or histogram) that goes down between two
// scrapes was reset; the increase counts from zero after it, is marked a
// lower bound, the reset is said, and no rate is ever negative.
func TestCounterReset(t *testing.T) {
	text := func(success float64, b [2]float64) string {
		return `# TYPE vllm:request_success_total counter
vllm:request_success_total ` + num(success) + `
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{le="1"} ` + num(b[0]) + `
vllm:e2e_request_latency_seconds_bucket{le="+Inf"} ` + num(b[1]) + `
vllm:e2e_request_latency_seconds_sum 0
vllm:e2e_request_latency_seconds_count ` + num(b[1]) + `
`
	}
	tests := []struct {
		name            string
		texts           []string
		inc, count      float64
		resets, hresets int
	}{
		{"no reset", []string{text(100, [2]float64{8, 10}), text(130, [2]float64{20, 30})}, 30, 20, 0, 0},
		{"reset between start and end", []string{text(100, [2]float64{8, 10}), text(7, [2]float64{2, 3})}, 7, 3, 1, 1},
		{"reset in the middle", []string{text(100, [2]float64{8, 10}), text(120, [2]float64{9, 12}), text(5, [2]float64{1, 1}), text(25, [2]float64{4, 6})}, 20 + 5 + 20, 2 + 1 + 5, 1, 1},
		{"one bucket going down is a reset", []string{text(1, [2]float64{8, 10}), text(1, [2]float64{7, 12})}, 0, 12, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := window(t, VLLM, nil, 10*time.Second, tt.texts...)
			c := get(t, v, Finished).Counter
			if c.Increase != tt.inc || c.Resets != tt.resets || c.LowerBound != (tt.resets > 0) || c.Rate < 0 || !near(c.Rate, tt.inc/v.Seconds) {
				t.Errorf("counter: %+v, want increase %v, %d resets", c, tt.inc, tt.resets)
			}
			h := get(t, v, E2E).Histogram
			if h.Count != tt.count || h.Resets != tt.hresets || h.LowerBound != (tt.hresets > 0) {
				t.Errorf("histogram: %+v, want count %v, %d resets", h, tt.count, tt.hresets)
			}
			said := strings.Contains(v.Explanation, "reset")
			if said != (tt.resets+tt.hresets > 0) {
				t.Errorf("explanation %q: reset said %v", v.Explanation, said)
			}
		})
	}
}

// TestSeriesDuringWindow: a series that appears after the start counted
// from zero; a changed bucket layout counts anew and says so.
func TestSeriesDuringWindow(t *testing.T) {
	start := `# TYPE vllm:request_success_total counter
vllm:request_success_total{finished_reason="stop"} 10
`
	end := start + `vllm:request_success_total{finished_reason="length"} 4
`
	if c := get(t, window(t, VLLM, nil, time.Second, start, end), Finished).Counter; c.Increase != 4 || c.LowerBound {
		t.Errorf("new series: %+v", c)
	}
	h := func(bounds string) string {
		return "# TYPE vllm:time_to_first_token_seconds histogram\n" + bounds +
			"vllm:time_to_first_token_seconds_sum 0\nvllm:time_to_first_token_seconds_count 10\n"
	}
	v := window(t, VLLM, nil, time.Second,
		h("vllm:time_to_first_token_seconds_bucket{le=\"1\"} 5\nvllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 10\n"),
		h("vllm:time_to_first_token_seconds_bucket{le=\"0.5\"} 5\nvllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 10\n"))
	s := get(t, v, TTFT)
	if s.Histogram.Count != 10 || !s.Histogram.LowerBound || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "layout changed") {
		t.Errorf("relayout: %+v notes %q", s.Histogram, s.Notes)
	}
}

// TestMergeAcrossSeries: histograms of several series merge on their
// common bounds.
func TestMergeAcrossSeries(t *testing.T) {
	text := func(a, b float64) string {
		return `# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1"} ` + num(a) + `
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.2"} ` + num(a) + `
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.4"} ` + num(a) + `
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf"} ` + num(a) + `
vllm:time_to_first_token_seconds_count{engine="0"} ` + num(a) + `
vllm:time_to_first_token_seconds_sum{engine="0"} 0
vllm:time_to_first_token_seconds_bucket{engine="1",le="0.2"} 0
vllm:time_to_first_token_seconds_bucket{engine="1",le="0.4"} ` + num(b) + `
vllm:time_to_first_token_seconds_bucket{engine="1",le="+Inf"} ` + num(b) + `
vllm:time_to_first_token_seconds_count{engine="1"} ` + num(b) + `
vllm:time_to_first_token_seconds_sum{engine="1"} 0
`
	}
	// engine 0: 10 in [0,0.1]; engine 1: 10 in (0.2,0.4]. Common bounds
	// 0.2, 0.4, +Inf: 10 in [0,0.2], 10 in (0.2,0.4].
	s := get(t, window(t, VLLM, nil, time.Second, text(0, 0), text(10, 10)), TTFT)
	if s.Series != 2 {
		t.Errorf("series %d", s.Series)
	}
	quantiles(t, s, 20, 0.2, 0.2+0.2*9/10, 0.2+0.2*9.8/10)
}

// TestConfiguredMetrics: named metrics are followed whatever the flavour,
// by the kind the server declares.
func TestConfiguredMetrics(t *testing.T) {
	text := func(g, c, n float64) string {
		return `# TYPE my_gauge gauge
my_gauge{a="1"} ` + num(g) + `
my_gauge{a="2"} -1
# TYPE my_requests_total counter
my_requests_total ` + num(c) + `
# TYPE my_latency histogram
my_latency_bucket{le="1"} ` + num(n) + `
my_latency_bucket{le="+Inf"} ` + num(n) + `
my_latency_sum 0
my_latency_count ` + num(n) + `
# TYPE my_summary summary
my_summary{quantile="0.5"} 3
my_summary_sum 10
my_summary_count ` + num(n) + `
my_untyped ` + num(g) + `
`
	}
	v := window(t, Auto, []string{"my_gauge", "my_requests_total", "my_latency", "my_summary", "my_untyped", "absent_metric"}, 5*time.Second,
		text(3, 10, 0), text(8, 40, 20))
	if v.Flavour != None {
		t.Errorf("flavour %q, want none", v.Flavour)
	}
	// A configured gauge may be negative: it is summed as it is.
	if s := v.Metric("my_gauge"); s == nil || s.Kind != Gauge || s.Gauge.Start != 2 || s.Gauge.Max != 7 || s.Invalid != 0 {
		t.Errorf("gauge: %+v", s)
	}
	if s := v.Metric("my_requests_total"); s == nil || s.Kind != Counter || s.Counter.Increase != 30 || s.Counter.Rate != 6 {
		t.Errorf("counter: %+v", s)
	}
	if s := v.Metric("my_latency"); s == nil || s.Histogram == nil || s.Histogram.Count != 20 || s.Histogram.P50.Value != 0.5 {
		t.Errorf("histogram: %+v", s)
	}
	if s := v.Metric("my_summary"); s == nil || s.Kind != Summary || s.Counter.Increase != 20 || len(s.Notes) != 1 {
		t.Errorf("summary: %+v", s)
	}
	if s := v.Metric("my_untyped"); s == nil || s.Kind != Gauge || s.Gauge.Last != 8 {
		t.Errorf("untyped: %+v", s)
	}
	if len(v.Missing) != 1 || v.Missing[0] != "absent_metric" {
		t.Errorf("missing %q", v.Missing)
	}
	if v.Explanation != "no known server metrics" {
		t.Errorf("explanation %q", v.Explanation)
	}
}

// TestMissingRoles: a forced flavour whose names are absent reports them
// missing, never as zero.
func TestMissingRoles(t *testing.T) {
	text := "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 0\n"
	v := window(t, VLLM, nil, time.Second, text, text)
	if len(v.Stats) != 1 || v.Get(Running) != nil {
		t.Errorf("stats %+v", v.Stats)
	}
	if len(v.Missing) != len(Profile(VLLM))-1 || !strings.HasPrefix(v.Missing[0], "running (vllm:num_requests_running)") {
		t.Errorf("missing %q", v.Missing)
	}
	if v.Explanation != "no waiting queue" {
		t.Errorf("explanation %q", v.Explanation)
	}
	if e := Explain(window(t, TGI, nil, time.Second, text, text)); e != "no server metrics of tgi exposed" {
		t.Errorf("explanation %q", e)
	}
}

// TestHostileValues: NaN, infinities, negative counts, a KV-cache
// fraction above 1, non-cumulative buckets and a changed type are left
// out and counted; the view still encodes as JSON.
func TestHostileValues(t *testing.T) {
	good := `# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting 2
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc 0.5
# TYPE vllm:request_success_total counter
vllm:request_success_total 10
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="1"} 1
vllm:time_to_first_token_seconds_bucket{le="+Inf"} 2
vllm:time_to_first_token_seconds_sum 1
vllm:time_to_first_token_seconds_count 2
`
	tests := []struct {
		name   string
		bad    string
		role   Role
		reason string
	}{
		{"NaN gauge", strings.Replace(good, "waiting 2", "waiting NaN", 1), Waiting, "NaN"},
		{"Inf gauge", strings.Replace(good, "waiting 2", "waiting +Inf", 1), Waiting, "infinite"},
		{"negative gauge", strings.Replace(good, "waiting 2", "waiting -4", 1), Waiting, "negative"},
		{"KV above 1", strings.Replace(good, "perc 0.5", "perc 98", 1), KVCache, "above 1"},
		{"negative counter", strings.Replace(good, "total 10", "total -3", 1), Finished, "negative"},
		{"NaN counter", strings.Replace(good, "total 10", "total NaN", 1), Finished, "NaN"},
		{"non-cumulative buckets", strings.Replace(good, `le="1"} 1`, `le="1"} 5`, 1), TTFT, "not cumulative"},
		{"NaN bucket", strings.Replace(good, `le="1"} 1`, `le="1"} NaN`, 1), TTFT, "NaN"},
		{"changed type", strings.Replace(good, "# TYPE vllm:num_requests_waiting gauge", "# TYPE vllm:num_requests_waiting counter", 1), Waiting, "exposed as counter, want gauge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := window(t, VLLM, nil, time.Second, good, tt.bad, good)
			s := get(t, v, tt.role)
			if s.Invalid != 1 || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], tt.reason) {
				t.Errorf("invalid %d, notes %q, want one %q", s.Invalid, s.Notes, tt.reason)
			}
			switch {
			case s.Gauge != nil:
				if s.Gauge.Samples != 2 || s.Gauge.Max != s.Gauge.Start {
					t.Errorf("gauge %+v: the bad sample was used", s.Gauge)
				}
			case s.Counter != nil:
				if s.Counter.Increase != 0 || s.Counter.Resets != 0 {
					t.Errorf("counter %+v: the bad sample was used", s.Counter)
				}
			case s.Histogram != nil:
				if s.Histogram.Count != 0 || s.Histogram.Resets != 0 {
					t.Errorf("histogram %+v: the bad sample was used", s.Histogram)
				}
			}
		})
	}
	// Values so large that their sum across series overflows.
	huge := "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{e=\"0\"} 1.7e308\nvllm:num_requests_waiting{e=\"1\"} 1.7e308\n"
	if s := get(t, window(t, VLLM, nil, time.Second, good, huge), Waiting); s.Invalid != 1 || s.Gauge.Max != 2 {
		t.Errorf("overflow: %+v", s)
	}
}

// TestTooManySeries: a family with more than MaxSeries series keeps
// MaxSeries and says how many it left out.
func TestTooManySeries(t *testing.T) {
	var b strings.Builder
	b.WriteString("# TYPE vllm:num_requests_running gauge\n")
	for i := range MaxSeries + 10 {
		b.WriteString("vllm:num_requests_running{engine=\"" + num(float64(i)) + "\"} 1\n")
	}
	s := get(t, window(t, VLLM, nil, time.Second, b.String(), b.String()), Running)
	if s.Series != MaxSeries || s.Gauge.Max != MaxSeries || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "10 series") {
		t.Errorf("%+v notes %q", s, s.Notes)
	}
	// A counter summed over the series kept is a lower bound of the family's.
	var start, end strings.Builder
	for _, w := range []*strings.Builder{&start, &end} {
		w.WriteString("# TYPE vllm:num_preemptions_total counter\n")
	}
	for i := range MaxSeries + 10 {
		fmt.Fprintf(&start, "vllm:num_preemptions_total{engine=\"%d\"} 1\n", i)
		fmt.Fprintf(&end, "vllm:num_preemptions_total{engine=\"%d\"} 2\n", i)
	}
	c := get(t, window(t, VLLM, nil, time.Second, start.String(), end.String()), Preemptions).Counter
	if c == nil || c.Increase != MaxSeries || !c.LowerBound {
		t.Errorf("counter over too many series: %+v, want the %d kept summed and marked a lower bound", c, MaxSeries)
	}
}

// TestDuplicateSeries: a label set repeated within one family counts once
// (the first value) and the view says so.
func TestDuplicateSeries(t *testing.T) {
	text := func(a, b float64) string {
		return "# TYPE vllm:request_success_total counter\nvllm:request_success_total " + num(a) + "\nvllm:request_success_total " + num(b) + "\n"
	}
	s := get(t, window(t, VLLM, nil, time.Second, text(10, 1000), text(15, 0)), Finished)
	if s.Counter.Increase != 5 || s.Counter.Resets != 0 || s.Series != 1 || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "repeating a label set") {
		t.Errorf("%+v %+v notes %q", s, s.Counter, s.Notes)
	}
}

// TestInvalidAtStart: a counter or histogram whose first values were
// invalid counts from its first valid value, marked a lower bound, never
// from zero.
func TestInvalidAtStart(t *testing.T) {
	text := func(c, h, n string) string {
		return "# TYPE vllm:request_success_total counter\nvllm:request_success_total " + c +
			"\n# TYPE vllm:e2e_request_latency_seconds histogram\nvllm:e2e_request_latency_seconds_bucket{le=\"1\"} " + h +
			"\nvllm:e2e_request_latency_seconds_bucket{le=\"+Inf\"} " + n + "\nvllm:e2e_request_latency_seconds_sum 0\nvllm:e2e_request_latency_seconds_count " + n + "\n"
	}
	v := window(t, VLLM, nil, time.Second, text("NaN", "NaN", "900"), text("1000", "800", "900"), text("1010", "805", "905"))
	if c := get(t, v, Finished).Counter; c.Increase != 10 || !c.LowerBound {
		t.Errorf("counter %+v", c)
	}
	if h := get(t, v, E2E).Histogram; h.Count != 5 || !h.LowerBound || h.P50 == nil || h.P50.Value != 0.5 {
		t.Errorf("histogram %+v", h)
	}
	if n := get(t, v, Finished).Notes; len(n) != 2 || !strings.Contains(n[0], "no valid value at the start") {
		t.Errorf("notes %q", n)
	}
}
