package scrape

import (
	"context"

	"github.com/llmprobe/llmprobe/internal/servermetrics"
)

// Mark scrapes once now and returns the waiting queue (the Waiting role's
// gauge) at the window's start and now; ok is false when the scrape failed
// or the server exposes no waiting queue. A ladder step marks the end of
// its arrivals with it: the view's end scrape comes after the step's
// requests settled, when the queue has drained. The mark is not folded
// into the window (a sampler scrape in flight could land after it, older,
// and read as a counter reset); a failed mark counts as a failed scrape.
func (w *Window) Mark(ctx context.Context) (start, now float64, ok bool) {
	e, err := w.s.Scrape(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return 0, 0, false
	}
	if err != nil {
		w.failed++
		w.lastErr = err.Error()
		return 0, 0, false
	}
	st := w.acc.View().Get(servermetrics.Waiting)
	if st == nil || st.Gauge == nil || st.Gauge.Samples == 0 {
		return 0, 0, false
	}
	one := servermetrics.NewAccumulator(w.acc.Flavour(), nil)
	one.Add(e)
	at := one.View().Get(servermetrics.Waiting)
	if at == nil || at.Gauge == nil || at.Gauge.Samples == 0 {
		return 0, 0, false
	}
	return st.Gauge.Start, at.Gauge.Last, true
}

// Mark is the open window's Mark (ok false without one).
func (s Session) Mark(ctx context.Context) (start, now float64, ok bool) {
	if s.w == nil {
		return 0, 0, false
	}
	return s.w.Mark(ctx)
}
