package main

import (
	"context"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// openServerView opens a probe run's window on the target's own metrics
// (--server-metrics); a scrape that fails is a view saying so, never an
// error of the run (only a bad --server-metrics is).
func openServerView(ctx context.Context, tg config.Target, client *protocol.Client) (servermetrics.Session, error) {
	sm, err := wiring.ServerMetrics(tg, client)
	if err != nil {
		return servermetrics.Session{}, badFlag("--server-metrics: %v", err)
	}
	if sm == nil {
		return servermetrics.Session{}, nil
	}
	return servermetrics.Open(ctx, sm), nil
}
