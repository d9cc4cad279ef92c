package main

import (
	"context"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// serverView is a probe run's window on the target's own metrics
// (--server-metrics): open, failed to open, or off.
type serverView struct {
	w    *servermetrics.Window
	fail *servermetrics.View
}

// openServerView opens the run's window; a scrape that fails is a view
// saying so, never an error of the run (only a bad --server-metrics is).
func openServerView(ctx context.Context, tg config.Target, client *protocol.Client) (serverView, error) {
	sm, err := wiring.ServerMetrics(tg, client)
	if err != nil {
		return serverView{}, badFlag("--server-metrics: %v", err)
	}
	if sm == nil {
		return serverView{}, nil
	}
	w, err := sm.Start(ctx)
	if err != nil {
		v := servermetrics.Unavailable(sm.URL(), err)
		return serverView{fail: &v}, nil
	}
	return serverView{w: w}, nil
}

// end closes the window (its end scrape runs even after an interrupt,
// bounded by the scrape timeout) and returns its view, nil when off.
func (s serverView) end(ctx context.Context) *servermetrics.View {
	if s.w == nil {
		return s.fail
	}
	v, _ := s.w.End(context.WithoutCancel(ctx)) // a partial view says why
	return &v
}
