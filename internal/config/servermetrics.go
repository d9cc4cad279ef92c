package config

import "github.com/llmprobe/llmprobe/internal/servermetrics"

// ServerMetrics describes a target's own Prometheus endpoint (vLLM's,
// SGLang's or TGI's /metrics): scraped at the start and end of each ladder
// step and every interval between, so a step's report says what the
// server saw (package servermetrics). Nothing is sent but a GET: no API key
// or header of the target.
type ServerMetrics struct {
	URL      string                `koanf:"url" json:"url,omitempty"`         // e.g. http://127.0.0.1:8000/metrics; "" = off
	Interval Duration              `koanf:"interval" json:"interval"`         // between samples inside a step; 0 = start and end only
	Timeout  Duration              `koanf:"timeout" json:"timeout"`           // per scrape
	Flavour  servermetrics.Flavour `koanf:"flavour" json:"flavour"`           // auto | vllm | sglang | tgi | llamacpp (read by servermetrics.Flavour)
	Metrics  []string              `koanf:"metrics" json:"metrics,omitempty"` // further metric names to report
}
