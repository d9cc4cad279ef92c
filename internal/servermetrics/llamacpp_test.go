package servermetrics

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// llamaWindow folds the captured llama.cpp expositions (each optionally
// edited) taken 10 s apart, with the flavour auto-detected.
func llamaWindow(t *testing.T, flavour Flavour, metrics []string, edit func(string) string, files ...string) View {
	t.Helper()
	texts := make([]string, len(files))
	for i, f := range files {
		texts[i] = string(fixture(t, f))
		if edit != nil {
			texts[i] = edit(texts[i])
		}
	}
	return window(t, flavour, metrics, 10*time.Second, texts...)
}

// TestLlamaCPPWindow: the captured llama.cpp scrapes (before, under load
// with 4 busy slots and 4 deferred, after) read by the detected flavour:
// each series by its real kind, tokens and their rates, no reset.
func TestLlamaCPPWindow(t *testing.T) {
	v := llamaWindow(t, Auto, nil, nil, "llamacpp_start.prom", "llamacpp_mid.prom", "llamacpp_end.prom")
	if v.Flavour != LlamaCPP {
		t.Fatalf("flavour %q, want llamacpp", v.Flavour)
	}
	gauges := []struct {
		role             Role
		start, max, last float64
		declared         Kind
	}{
		{Running, 0, 4, 0, ""},
		{Waiting, 0, 4, 0, ""},
		{TokensMax, 407, 502, 502, Counter},
		{SlotsPerDec, 3.17893, 3.33087, 2.90645, ""},
		{GenTPSLife, 158.629, 190.652, 190.652, ""},
	}
	for _, g := range gauges {
		s := get(t, v, g.role)
		if s.Kind != Gauge || s.Declared != g.declared || s.Gauge == nil || s.Gauge.Start != g.start || s.Gauge.Max != g.max || s.Gauge.Last != g.last {
			t.Errorf("%s: %+v %+v, want a gauge (declared %q) %v→max %v→%v", g.role, s, s.Gauge, g.declared, g.start, g.max, g.last)
		}
	}
	counters := []struct {
		role Role
		inc  float64
	}{{PromptTokens, 214}, {GenTokens, 2900}, {PromptSeconds, 0.21}, {GenSeconds, 11.505}, {Decodes, 1101}}
	for _, c := range counters {
		s := get(t, v, c.role)
		if s.Kind != Counter || s.Counter == nil || !near(s.Counter.Increase, c.inc) || !near(s.Counter.Rate, c.inc/20) || s.Counter.Resets != 0 {
			t.Errorf("%s: %+v, want an increase of %v over 20 s", c.role, s.Counter, c.inc)
		}
	}
	tok := TokenThroughput(v)
	if !tok.GeneratedOK || tok.GeneratedRate != 145 || !near(tok.PerSequence, 2900/11.505) {
		t.Errorf("throughput %+v", tok)
	}
	want := []string{"kv_cache (llamacpp:kv_cache_usage_ratio)", "kv_tokens (llamacpp:kv_cache_tokens)"}
	if strings.Join(v.Missing, "|") != strings.Join(want, "|") {
		t.Errorf("missing %q, want %q (this build exports no KV-cache series)", v.Missing, want)
	}
	const explain = "deferred requests grew from 0 to 4 (0 at the end); slots busy up to 4; 214 prompt tokens (10.7/s); 2900 tokens generated (145/s; 252/s per sequence)"
	if v.Explanation != explain {
		t.Errorf("explanation\n got %q\nwant %q", v.Explanation, explain)
	}
}

// TestLlamaCPPNoFalseReset: llama.cpp's averages and high-water mark go
// down or stay (n_busy_slots_per_decode fell from 3.33 to 2.91 in the
// capture) whatever type the server declares for them (b4747 declared
// n_busy_slots_per_decode a counter): no reset is seen. A real counter
// going down (the server restarted between two scrapes) is a reset, and
// the note names it.
func TestLlamaCPPNoFalseReset(t *testing.T) {
	asCounter := func(s string) string { // as b4747 declared it
		return strings.Replace(s, "# TYPE llamacpp:n_busy_slots_per_decode gauge", "# TYPE llamacpp:n_busy_slots_per_decode counter", 1)
	}
	tests := []struct {
		name    string
		flavour Flavour
		metrics []string
		edit    func(string) string
		files   []string
		resets  []string // metrics named in the reset note, in order
	}{
		{"averages going down, declared gauge", Auto, nil, nil,
			[]string{"llamacpp_mid.prom", "llamacpp_end.prom"}, nil},
		{"the average declared a counter (b4747)", Auto, nil, asCounter,
			[]string{"llamacpp_mid.prom", "llamacpp_end.prom"}, nil},
		{"configured by hand beside the flavour", LlamaCPP, []string{"llamacpp:n_busy_slots_per_decode", "llamacpp:n_tokens_max"}, asCounter,
			[]string{"llamacpp_mid.prom", "llamacpp_end.prom"}, nil},
		{"configured by hand without a flavour: read as declared, and named", None, []string{"llamacpp:n_busy_slots_per_decode"}, asCounter,
			[]string{"llamacpp_mid.prom", "llamacpp_end.prom"}, []string{"llamacpp:n_busy_slots_per_decode"}},
		{"a restart: the real counters went down", Auto, nil, asCounter,
			[]string{"llamacpp_end.prom", "llamacpp_restart.prom"},
			[]string{"llamacpp:prompt_tokens_total", "llamacpp:tokens_predicted_total", "llamacpp:prompt_seconds_total"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := llamaWindow(t, tt.flavour, tt.metrics, tt.edit, tt.files...)
			if tt.resets == nil {
				if strings.Contains(v.Explanation, "reset") {
					t.Errorf("false reset: %q", v.Explanation)
				}
				if s := v.Metric("llamacpp:n_busy_slots_per_decode"); s == nil || s.Kind != Gauge || s.Gauge.Last != 2.90645 {
					t.Errorf("n_busy_slots_per_decode: %+v", s)
				}
				return
			}
			note := "server counters reset during the window (a restart?): " + strings.Join(tt.resets, ", ")
			if !strings.Contains(v.Explanation, note) {
				t.Errorf("explanation %q\nlacks %q", v.Explanation, note)
			}
			for _, s := range v.Stats {
				if s.Kind == Gauge && strings.Contains(v.Explanation, s.Metric) {
					t.Errorf("a gauge named as reset: %s in %q", s.Metric, v.Explanation)
				}
			}
		})
	}
}

// TestDetect: each flavour from its names; llama.cpp's from llamacpp:.
func TestDetect(t *testing.T) {
	tests := []struct {
		text string
		want Flavour
	}{
		{string(fixture(t, "llamacpp_start.prom")), LlamaCPP},
		{"# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred 0\n", LlamaCPP},
		{"# TYPE llamacpp_requests_deferred gauge\nllamacpp_requests_deferred 0\n", None}, // not its spelling
		{"# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 0\n", VLLM},
		{"# TYPE tgi_queue_size gauge\ntgi_queue_size 0\n", TGI},
		{"# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1\n", None},
	}
	for _, tt := range tests {
		if got := Detect(expo(t, tt.text, 0)); got != tt.want {
			t.Errorf("Detect(%.60q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestParseFlavour: the one parser of a flavour.
func TestParseFlavour(t *testing.T) {
	for in, want := range map[string]Flavour{"": Auto, "auto": Auto, " LlamaCPP ": LlamaCPP, "vllm": VLLM, "sglang": SGLang, "tgi": TGI} {
		if got, err := ParseFlavour(in); err != nil || got != want {
			t.Errorf("ParseFlavour(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"llama.cpp", "none", "triton"} {
		if _, err := ParseFlavour(in); err == nil || !strings.Contains(err.Error(), FlavourChoices) {
			t.Errorf("ParseFlavour(%q): %v", in, err)
		}
	}
}

// TestFlavourText: a configured flavour reads itself by ParseFlavour and
// refuses an unknown one with the choices; a View's JSON keeps what it
// recorded, a detected none included.
func TestFlavourText(t *testing.T) {
	var f Flavour
	if err := f.UnmarshalText([]byte("VLLM")); err != nil || f != VLLM {
		t.Errorf("VLLM: %q, %v", f, err)
	}
	if err := f.UnmarshalText(nil); err != nil || f != Auto {
		t.Errorf("empty: %q, %v", f, err)
	}
	for _, bad := range []string{"triton", "none"} {
		if err := f.UnmarshalText([]byte(bad)); err == nil || err.Error() != "want "+FlavourChoices+`; got "`+bad+`"` {
			t.Errorf("%s: %v", bad, err)
		}
	}
	var v View
	if err := json.Unmarshal([]byte(`{"flavour":"none"}`), &v); err != nil || v.Flavour != None {
		t.Errorf("view flavour %q, %v", v.Flavour, err)
	}
}
