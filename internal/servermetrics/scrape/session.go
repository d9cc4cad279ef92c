package scrape

import (
	"context"

	"github.com/llmprobe/llmprobe/internal/servermetrics"
)

// Source opens windows on a server's metrics: a *Scraper (an interface so
// that tests can stand in for one). URL names the endpoint in a view that
// could not be opened.
type Source interface {
	Start(ctx context.Context) (*Window, error)
	URL() string
}

// Session is one window a ladder step or a probe run keeps on the
// server's metrics: open, or the view saying why it could not be opened,
// or nothing (no endpoint configured). A failure to open is never an
// error of the run. Its methods are for the one goroutine that opened it.
type Session struct {
	w    *Window
	fail *servermetrics.View
}

// Open opens a Session on src before the run's first arrival is planned
// (the start scrape must not eat into its schedule); src nil is a Session
// of nothing.
func Open(ctx context.Context, src Source) Session {
	if src == nil {
		return Session{}
	}
	w, err := src.Start(ctx)
	if err != nil {
		v := servermetrics.Unavailable(src.URL(), err)
		return Session{fail: &v}
	}
	return Session{w: w}
}

// End closes the window once the run's requests settled and returns its
// view (nil when there is none). The end scrape runs even when ctx was
// cancelled (bounded by the scrape timeout): a run interrupted midway
// still says what the server saw until then. A failed end scrape leaves a
// partial view that says why.
func (s Session) End(ctx context.Context) *servermetrics.View {
	if s.w == nil {
		return s.fail
	}
	v, _ := s.w.End(context.WithoutCancel(ctx)) // the view says why it is partial
	return &v
}

// Close abandons the window (a run that failed before it could be
// summarised); harmless after End.
func (s Session) Close() {
	if s.w != nil {
		s.w.Close()
	}
}
