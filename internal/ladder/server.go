package ladder

import (
	"context"

	"github.com/llmprobe/llmprobe/internal/servermetrics"
)

// ServerMetrics reads the target's own metrics endpoint beside each step
// (a *servermetrics.Scraper): Start opens a window with a first scrape and
// samples until the window ends; URL names the endpoint in a view that
// could not be opened.
type ServerMetrics interface {
	Start(ctx context.Context) (*servermetrics.Window, error)
	URL() string
}

// serverWindow is one step's window on the server's metrics: open, or the
// view saying why it could not be opened, or nothing (none configured).
type serverWindow struct {
	w    *servermetrics.Window
	fail *servermetrics.View
}

// openServer opens the step's window before its first arrival is planned
// (the start scrape must not eat into the step's schedule). A failure is a
// view that says so, never an error of the step.
func (r *Runner) openServer(ctx context.Context) serverWindow {
	sm := r.cfg.ServerMetrics
	if sm == nil {
		return serverWindow{}
	}
	w, err := sm.Start(ctx)
	if err != nil {
		v := servermetrics.Unavailable(sm.URL(), err)
		return serverWindow{fail: &v}
	}
	return serverWindow{w: w}
}

// end closes the window once the step's requests settled and returns its
// view (nil when none is configured). The end scrape runs even when ctx
// was cancelled (bounded by the scrape timeout): a ladder interrupted
// mid-step still says what the server saw until then. A failed end scrape
// leaves a partial view that says why.
func (s serverWindow) end(ctx context.Context) *servermetrics.View {
	if s.w == nil {
		return s.fail
	}
	v, _ := s.w.End(context.WithoutCancel(ctx)) // the view says why it is partial
	return &v
}

// close abandons the window (a step that failed before it could be
// summarised); harmless after end.
func (s serverWindow) close() {
	if s.w != nil {
		s.w.Close()
	}
}
