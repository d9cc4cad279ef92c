package main

import (
	"context"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
)

// triggerTargetFiles names a reload the target files' poller asked for.
const triggerTargetFiles = "target_files changed"

// noFilesRecheck is how often the poller looks again at a configuration
// without target_files (a reload may add some).
const noFilesRecheck = time.Minute

// running records a configuration that loaded and runs (at start, or after
// a reload): its target files' fingerprint as read, for the poller, and its
// targets' constant labels, on /metrics. Callers hold r.mu, or run before
// the poller starts.
func (r *reloader) running(c *config.Config) {
	r.current, r.fingerprint = c, c.TargetFilesRead()
	if r.files != nil {
		r.files.Set(config.TargetLabels(c))
	}
}

// watchTargetFiles polls the running configuration's target files every
// refresh_interval (the shortest of its blocks) until ctx ends, and reloads
// the configuration, through the one reload path, when their fingerprint
// differs from the one of the configuration running. A refused reload
// keeps the last good targets (the reload logs why) and is counted; the
// files are not read again into a reload until they change again (back to
// what runs included: that reload clears the failure).
func (r *reloader) watchTargetFiles(ctx context.Context) {
	for {
		r.mu.Lock()
		cur, fp := r.current, r.fingerprint
		r.mu.Unlock()
		wait := noFilesRecheck
		if iv := config.TargetFilesInterval(cur); iv > 0 {
			wait = iv
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		now := config.TargetFilesFingerprint(cur)
		refused, _ := r.refused.Load().(string)
		if now == refused || (now == fp && refused == "") {
			continue // unchanged, or broken as when last refused
		}
		// Files put back as the running configuration read them, after a
		// refusal, reload too: the last reload's outcome is good again.
		err := r.reload(ctx, triggerTargetFiles)
		if err != nil {
			r.refused.Store(now)
		} else {
			r.refused.Store("")
		}
		if r.files != nil {
			r.files.Changed(err == nil)
		}
	}
}
