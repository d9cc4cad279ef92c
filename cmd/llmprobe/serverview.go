package main

import (
	"context"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/servermetrics/scrape"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// openServerView opens a probe run's window on the target's own metrics
// (--server-metrics); a scrape that fails is a view saying so, never an
// error of the run (only a bad --server-metrics is).
func openServerView(ctx context.Context, tg config.Target, client *protocol.Client) (scrape.Session, error) {
	sm, err := wiring.ServerMetrics(tg, client)
	if err != nil {
		return scrape.Session{}, badFlag("--server-metrics: %v", err)
	}
	if sm == nil {
		return scrape.Session{}, nil
	}
	return scrape.Open(ctx, sm), nil
}
