package servermetrics

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestParseFixtures: the recorded expositions parse, with the families,
// kinds and series a reader of them expects, and the right flavour.
func TestParseFixtures(t *testing.T) {
	tests := []struct {
		file     string
		flavour  Flavour
		families int
		kinds    map[string]Kind
		series   map[string]int
	}{
		{"vllm_start.prom", VLLM, 19, map[string]Kind{
			"vllm:num_requests_running":        Gauge,
			"vllm:kv_cache_usage_perc":         Gauge,
			"vllm:request_success_total":       Counter,
			"vllm:time_to_first_token_seconds": Histogram,
			"vllm:cache_config_info":           Gauge,
		}, map[string]int{"vllm:request_success_total": 3, "python_gc_objects_collected_total": 3}},
		{"sglang_end.prom", SGLang, 13, map[string]Kind{
			"sglang:num_queue_reqs":              Gauge,
			"sglang:token_usage":                 Gauge,
			"sglang:num_requests_total":          Counter,
			"sglang:inter_token_latency_seconds": Histogram,
		}, map[string]int{"sglang:num_running_reqs": 1}},
		{"tgi_end.prom", TGI, 9, map[string]Kind{
			"tgi_queue_size":             Gauge,
			"tgi_request_success":        Counter,
			"tgi_request_queue_duration": Histogram,
		}, map[string]int{"tgi_batch_inference_duration": 2}},
		// captured from llama.cpp's llama-server (../shared/engines/llama.cpp)
		// with 4 requests in its 4 slots and 4 deferred
		{"llamacpp_mid.prom", LlamaCPP, 11, map[string]Kind{
			"llamacpp:tokens_predicted_total":   Counter,
			"llamacpp:n_tokens_max":             Counter, // declared so; a high-water mark
			"llamacpp:n_busy_slots_per_decode":  Gauge,
			"llamacpp:requests_processing":      Gauge,
			"llamacpp:requests_deferred":        Gauge,
			"llamacpp:predicted_tokens_seconds": Gauge,
		}, map[string]int{"llamacpp:requests_processing": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			e, err := Parse(fixture(t, tt.file), textType)
			if err != nil {
				t.Fatal(err)
			}
			if len(e.Families) != tt.families {
				t.Errorf("%d families, want %d", len(e.Families), tt.families)
			}
			if f := Detect(e); f != tt.flavour {
				t.Errorf("Detect = %q, want %q", f, tt.flavour)
			}
			for name, k := range tt.kinds {
				if f, ok := e.Families[name]; !ok || f.Kind != k {
					t.Errorf("%s: %+v, want kind %s", name, f, k)
				}
			}
			for name, n := range tt.series {
				if f := e.Families[name]; f == nil || len(f.Series) != n {
					t.Errorf("%s: %+v, want %d series", name, f, n)
				}
			}
			for _, f := range e.Families {
				if f.Kind != Histogram {
					continue
				}
				for _, s := range f.Series {
					last := s.Buckets[len(s.Buckets)-1]
					if !math.IsInf(last.UpperBound, 1) || last.Count != s.Count || validBuckets(s.Buckets) != "" {
						t.Errorf("%s: buckets %+v count %v", f.Name, s.Buckets, s.Count)
					}
				}
			}
		})
	}
}

// TestParseFormats: the Content-Type chooses the parser; OpenMetrics and
// the text format give the same figures; unknown types are refused.
func TestParseFormats(t *testing.T) {
	om := `# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="m"} 7
# TYPE vllm:request_success counter
vllm:request_success_total{model_name="m"} 12
vllm:request_success_created{model_name="m"} 1.7e+09
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{model_name="m",le="0.1"} 3
vllm:time_to_first_token_seconds_bucket{model_name="m",le="+Inf"} 4
vllm:time_to_first_token_seconds_count{model_name="m"} 4
vllm:time_to_first_token_seconds_sum{model_name="m"} 0.5
# EOF
`
	text := strings.NewReplacer("# TYPE vllm:request_success counter", "# TYPE vllm:request_success_total counter",
		"vllm:request_success_created{model_name=\"m\"} 1.7e+09\n", "", "# EOF\n", "").Replace(om)
	tests := []struct {
		name, body, contentType, wantErr string
	}{
		{"OpenMetrics 1.0", om, "application/openmetrics-text; version=1.0.0; charset=utf-8", ""},
		{"OpenMetrics 0.0.1", om, "application/openmetrics-text; version=0.0.1", ""},
		{"text 0.0.4", text, "text/plain; version=0.0.4; charset=utf-8", ""},
		{"text without version", text, "text/plain", ""},
		{"text of another version", text, "text/plain; version=1.0.0", ""},
		{"no content type", text, "", ""},
		{"HTML", "<html>login</html>", "text/html; charset=utf-8", "unsupported content type"},
		{"JSON", `{"a":1}`, "application/json", "unsupported content type"},
		{"OpenMetrics 2.0", om, "application/openmetrics-text; version=2.0.0", "unsupported content type"},
		{"OpenMetrics without # EOF", strings.TrimSuffix(om, "# EOF\n"), "application/openmetrics-text; version=1.0.0", "parse OpenMetrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse([]byte(tt.body), tt.contentType)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a := NewAccumulator(VLLM, nil)
			a.Add(e)
			a.Add(e)
			v := a.View()
			if g := v.Get(Waiting); g == nil || g.Gauge.Max != 7 {
				t.Errorf("waiting: %+v", g)
			}
			if c := v.Get(Finished); c == nil || c.Kind != Counter {
				t.Errorf("finished: %+v", c)
			}
			if h := v.Get(TTFT); h == nil || h.Kind != Histogram || h.Series != 1 {
				t.Errorf("ttft: %+v", h)
			}
		})
	}
}

// TestParseHostile: garbage, invalid UTF-8, huge lines and duplicates are
// errors, never a panic, and the error text is fit to print once
// sanitised; NaN and infinities parse (the window leaves them out).
func TestParseHostile(t *testing.T) {
	tests := []struct {
		name    string
		body    []byte
		wantErr bool
	}{
		{"empty", nil, false},
		{"garbage", []byte("\x00\x01\x02 not metrics {{{ \n"), true},
		{"random bytes", bytes.Repeat([]byte{0xff, 0xfe, 0x00, '{', '"'}, 1000), true},
		{"invalid UTF-8 label value", []byte("vllm:num_requests_waiting{model_name=\"\xff\xfe\"} 1\n"), true},
		{"invalid UTF-8 in HELP", []byte("# HELP vllm:num_requests_waiting \xff\xfe\nvllm:num_requests_waiting 1\n"), false},
		{"unterminated label", []byte("vllm:num_requests_waiting{model_name=\"x} 1\n"), true},
		{"value not a number", []byte("vllm:num_requests_waiting twelve\n"), true},
		{"bad TYPE", []byte("# TYPE vllm:x frobnicator\nvllm:x 1\n"), true},
		{"one huge line", append(append([]byte("vllm:num_requests_waiting{a=\""), bytes.Repeat([]byte("A"), 4<<20)...), "\"} 1\n"...), false},
		{"huge metric name", append(bytes.Repeat([]byte("a"), 1<<20), " 1\n"...), false},
		{"duplicate series", []byte("vllm:num_requests_waiting 1\nvllm:num_requests_waiting 2\n"), false},
		{"NaN and Inf values", []byte("# TYPE g gauge\ng{a=\"1\"} NaN\ng{a=\"2\"} +Inf\ng{a=\"3\"} -Inf\n"), false},
		{"histogram with bad bucket bound", []byte("# TYPE h histogram\nh_bucket{le=\"abc\"} 1\nh_count 1\nh_sum 1\n"), true},
		{"controls and escapes in label", []byte("g{a=\"\\x1b[31m\\n\"} 1\n"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse(tt.body, textType)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				if e != nil {
					t.Error("a partly parsed exposition was returned with the error")
				}
				msg := CleanError(nil, err) // as Scrape shows it
				if strings.Contains(msg, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA") {
					t.Errorf("error text not bounded: %d bytes", len(msg))
				}
				if !utf8.ValidString(msg) || len(msg) > errMax || strings.ContainsAny(msg, "\x00\x1b\n") {
					t.Errorf("sanitised error not fit to print: %q", msg)
				}
				return
			}
			// Whatever parsed folds into a view that encodes.
			a := NewAccumulator(Auto, []string{"g", "h", "vllm:num_requests_waiting"})
			a.Add(e)
			a.Add(e)
			mustJSON(t, a.View())
		})
	}
}

// openMetrics re-encodes the families of a text exposition that keep
// accepts (nil: all) as OpenMetrics 1.0 with expfmt.
func openMetrics(t testing.TB, text []byte, keep func(string) bool) []byte {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, name := range sortedKeys(fams) {
		if keep != nil && !keep(name) {
			continue
		}
		if _, err := expfmt.MetricFamilyToOpenMetrics(&b, fams[name]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := expfmt.FinalizeOpenMetrics(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const omType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

// core keeps the vLLM families an OpenMetrics fragment is made of.
func core(name string) bool {
	switch name {
	case "vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
		"vllm:request_success_total", "vllm:num_preemptions_total", "vllm:time_to_first_token_seconds":
		return true
	}
	return false
}

// TestOpenMetricsFixture: vLLM's core metrics served as OpenMetrics give
// the same view as in the text format; a whole exposition in OpenMetrics,
// or a long line, is refused with a clear error (expfmt's OpenMetrics
// parser is too costly for hostile input).
func TestOpenMetricsFixture(t *testing.T) {
	views := map[string]View{}
	for _, format := range []string{textType, omType} {
		a := NewAccumulator(Auto, nil)
		for i, f := range []string{"vllm_start.prom", "vllm_end.prom"} {
			body := fixture(t, f)
			if format == omType {
				body = openMetrics(t, body, core)
			}
			e, err := Parse(body, format)
			if err != nil {
				t.Fatalf("%s %s: %v", format, f, err)
			}
			for name := range e.Families {
				if !core(name) {
					delete(e.Families, name)
				}
			}
			e.At = t0.Add(time.Duration(i) * time.Minute)
			a.Add(e)
		}
		v := a.View()
		v.Explanation = Explain(v)
		views[format] = v
	}
	txt, om := views[textType], views[omType]
	if len(om.Stats) != len(txt.Stats) || len(om.Stats) != 6 {
		t.Fatalf("stats: text %d, OpenMetrics %d", len(txt.Stats), len(om.Stats))
	}
	for i := range txt.Stats {
		a, b := txt.Stats[i], om.Stats[i]
		if a.Role != b.Role || a.Kind != b.Kind || a.Series != b.Series || (a.Gauge != nil) != (b.Gauge != nil) || (a.Gauge != nil && *a.Gauge != *b.Gauge) {
			t.Errorf("stat %d: text %+v, OpenMetrics %+v", i, a, b)
		}
		if a.Counter != nil && (b.Counter == nil || *a.Counter != *b.Counter) {
			t.Errorf("%s: text %+v, OpenMetrics %+v", a.Metric, a.Counter, b.Counter)
		}
		if a.Histogram != nil && (b.Histogram == nil || a.Histogram.Count != b.Histogram.Count || *a.Histogram.P95 != *b.Histogram.P95) {
			t.Errorf("%s: text %+v, OpenMetrics %+v", a.Metric, a.Histogram, b.Histogram)
		}
	}
	if om.Explanation != txt.Explanation || !strings.HasPrefix(om.Explanation, "waiting queue grew from 0 to 37; running up to 64; KV cache up to 98 %; server TTFT p95 80ms (n=100)") {
		t.Errorf("explanations:\n%s\n%s", txt.Explanation, om.Explanation)
	}

	whole := openMetrics(t, fixture(t, "vllm_end.prom"), nil)
	if _, err := Parse(whole, omType); err == nil || !strings.Contains(err.Error(), "OpenMetrics body of") || !strings.Contains(err.Error(), "text format") {
		t.Errorf("a whole exposition in OpenMetrics: err = %v", err)
	}
	long := "# TYPE g gauge\ng{a=\"" + strings.Repeat("A", 200) + "\"} 1\n# EOF\n"
	if _, err := Parse([]byte(long), omType); err == nil || !strings.Contains(err.Error(), "OpenMetrics line of 210 bytes") {
		t.Errorf("a long OpenMetrics line: err = %v", err)
	}
	if _, err := Parse([]byte(long), textType); err != nil {
		t.Errorf("the same line in the text format: %v", err)
	}
}

// BenchmarkParse: the text format at the size of a real vLLM exposition,
// and the largest OpenMetrics fragment accepted.
func BenchmarkParse(b *testing.B) {
	text := fixture(b, "vllm_end.prom")
	om := openMetrics(b, text, core)
	for _, c := range []struct {
		name, ct string
		body     []byte
	}{{"text", textType, text}, {"openmetrics-core", omType, om}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if _, err := Parse(c.body, c.ct); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzParseView: whatever a server sends in the text format, Parse
// returns an exposition or an error (never a panic), and two of them fold
// into a view that encodes as JSON. (OpenMetrics is left to the
// table-driven tests: expfmt's OpenMetrics parser is too slow to fuzz.)
func FuzzParseView(f *testing.F) {
	// Small seeds: the fuzzer minimises every new input, slowly when large.
	for _, name := range []string{"vllm_start.prom", "sglang_start.prom", "tgi_start.prom"} {
		b := fixture(f, name)
		f.Add(b[:bytes.LastIndexByte(b[:min(len(b), 1500)], '\n')+1])
	}
	f.Add([]byte("# TYPE vllm:time_to_first_token_seconds histogram\n" +
		"vllm:time_to_first_token_seconds_bucket{le=\"0.1\"} 3\nvllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 4\n" +
		"vllm:time_to_first_token_seconds_sum 1\nvllm:time_to_first_token_seconds_count 4\n"))
	f.Add([]byte("# TYPE g gauge\ng NaN\n# TYPE h histogram\nh_bucket{le=\"1\"} -1\nh_bucket{le=\"+Inf\"} 1e308\n"))
	f.Add([]byte("# TYPE sglang:time_to_first_token_seconds histogrAm\nsglang:time_to_first_token_seconds!"))
	f.Fuzz(func(t *testing.T, body []byte) {
		e, err := Parse(body, textType)
		if err != nil {
			if e != nil {
				t.Fatal("exposition and error")
			}
			return
		}
		a := NewAccumulator(Auto, []string{"g", "h", "vllm:num_requests_waiting"})
		a.Add(e)
		a.Add(e)
		v := a.View()
		v.Explanation = Explain(v)
		mustJSON(t, v)
	})
}
