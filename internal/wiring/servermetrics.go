package wiring

import (
	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/servermetrics/scrape"
)

// ServerMetrics builds the reader of a target's own metrics endpoint
// (server_metrics) for its ladders, or nil when server_metrics.url is
// empty. Scrapes go through the target client's transport (its TLS
// settings, proxy and connection pool) but carry none of its credentials:
// no API key, no configured header (vLLM, SGLang and TGI serve /metrics
// without the API key they require on their inference routes). Error texts
// are cleaned with the client's Redactor, so an endpoint echoing the key
// shows only the marker.
func ServerMetrics(t config.Target, c *protocol.Client) (ladder.ServerMetrics, error) {
	sm := t.ServerMetrics
	if sm.URL == "" {
		return nil, nil
	}
	// The flavour was read by servermetrics.Flavour as it was loaded;
	// scrape.New checks it again for Go callers.
	s, err := scrape.New(scrape.Options{
		URL: sm.URL, Interval: sm.Interval.D(), Timeout: sm.Timeout.D(), Flavour: sm.Flavour,
		Metrics: sm.Metrics, Client: c.PlainHTTP(), Redactor: c.Redactor(),
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}
