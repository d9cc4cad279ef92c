package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestServerMetricsDefaultsAndValues(t *testing.T) {
	c, err := LoadWith(Options{Path: write(t, minimal), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	want := ServerMetrics{Interval: Duration(2 * time.Second), Timeout: Duration(2 * time.Second), Flavour: "auto"}
	if got := c.Targets[0].ServerMetrics; !reflect.DeepEqual(got, want) {
		t.Errorf("defaults %+v, want %+v (off: no url)", got, want)
	}
	c, err = LoadWith(Options{Path: write(t, minimal+`    server_metrics:
      url: http://127.0.0.1:8000/metrics
      interval: 500ms
      flavour: vllm
      metrics: [vllm:num_preemptions_total, "process_resident_memory_bytes"]
`), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	want = ServerMetrics{URL: "http://127.0.0.1:8000/metrics", Interval: Duration(500 * time.Millisecond), Timeout: Duration(2 * time.Second),
		Flavour: "vllm", Metrics: []string{"vllm:num_preemptions_total", "process_resident_memory_bytes"}}
	if got := c.Targets[0].ServerMetrics; !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// interval 0: start and end of each step only.
	if _, err := LoadWith(Options{Path: write(t, minimal+"    server_metrics: {url: \"https://h:8443/metrics\", interval: 0s}\n"), Environ: noEnv}); err != nil {
		t.Errorf("interval 0s: %v", err)
	}
}

func TestServerMetricsErrors(t *testing.T) {
	sm := func(body string) string { return minimal + "    server_metrics: " + body + "\n" }
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"relative url", sm("{url: 127.0.0.1:8000/metrics}"), []string{"targets[0].server_metrics.url: want an absolute http(s) URL"}},
		{"credentials", sm("{url: \"http://u:pw@127.0.0.1/metrics\"}"), []string{"targets[0].server_metrics.url: credentials in the URL"}},
		{"secret query", sm("{url: \"http://127.0.0.1/metrics?token=abc\"}"), []string{"targets[0].server_metrics.url: query parameter \"token\" looks secret"}},
		{"metrics without url", sm("{metrics: [a]}"), []string{"targets[0].server_metrics.url: required when metrics are named"}},
		{"interval too short", sm("{url: \"http://h/metrics\", interval: 10ms}"), []string{"targets[0].server_metrics.interval: want 0 (start and end of each step only) or 100ms to 1m0s, got 10ms"}},
		{"interval not a duration", sm("{url: \"http://h/metrics\", interval: 5}"), []string{"targets[0].server_metrics.interval: want a duration string"}},
		{"zero timeout", sm("{url: \"http://h/metrics\", timeout: 0s}"), []string{"targets[0].server_metrics.timeout: want above 0"}},
		{"long timeout", sm("{url: \"http://h/metrics\", timeout: 5m}"), []string{"targets[0].server_metrics.timeout: want above 0 and at most 1m0s, got 5m0s"}},
		{"bad metric name", sm("{url: \"http://h/metrics\", metrics: [ok_name, \"bad name\", \"9lives\"]}"),
			[]string{"targets[0].server_metrics.metrics[1]: \"bad name\" is not a Prometheus metric name", "targets[0].server_metrics.metrics[2]: \"9lives\""}},
		{"duplicate metric", sm("{url: \"http://h/metrics\", metrics: [a, a]}"), []string{"targets[0].server_metrics.metrics[1]: \"a\" named twice"}},
		{"metrics not a list", sm("{url: \"http://h/metrics\", metrics: a}"), []string{"targets[0].server_metrics.metrics: want a list"}},
		{"unknown key", sm("{url: \"http://h/metrics\", api_key: x}"), []string{"targets[0].server_metrics.api_key: unknown key: literal secrets"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, tc.body)
			_, err := LoadWith(Options{Path: p, Environ: noEnv})
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("want config.Errors, got %T: %v", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(unplaced(err), p+": "+w) {
					t.Errorf("want %q naming the file in\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "pw@") {
				t.Errorf("error echoes a password: %v", err)
			}
		})
	}
}
