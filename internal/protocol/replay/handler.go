package replay

import (
	"io"
	"net/http"
	"time"
)

// Handler serves f on every request: after the declared headers delay it
// writes the status and content type, then each segment after its declared
// delay, flushing each one. It stops early, without writing more, when the
// client goes away (its request context ends), so a client timeout ends the
// handler promptly. The request body is read and discarded first.
func Handler(f *Fixture) http.Handler {
	segs := f.Segments()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		ctx := r.Context()
		if !sleep(ctx.Done(), time.Duration(f.Spec.HeadersMS)*time.Millisecond) {
			return
		}
		ct := f.Spec.ContentType
		if ct == "" {
			ct = "text/event-stream"
		}
		status := f.Spec.Status
		if status == 0 {
			status = http.StatusOK
		}
		h := w.Header()
		h.Set("Content-Type", ct)
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Fixture", f.ID())
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			h.Set("Retry-After", "1")
		}
		w.WriteHeader(status)
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		for i, seg := range segs {
			if !sleep(ctx.Done(), f.Delay(i)) {
				return
			}
			if _, err := w.Write(seg); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	})
}

// sleep waits d, or until done closes; it reports whether the full delay
// passed.
func sleep(done <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}
