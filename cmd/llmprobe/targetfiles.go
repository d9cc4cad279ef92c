package main

import (
	"context"
	"reflect"
	"slices"
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
// targets' constant labels, on /metrics. It returns the configuration it
// replaced. Callers hold r.mu, or run before the poller starts.
func (r *reloader) running(c *config.Config) *config.Config {
	old := r.current
	r.current, r.fingerprint = c, c.TargetFilesRead()
	if r.files != nil {
		r.files.Set(config.TargetLabels(c))
	}
	return old
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

// logTargetChanges logs what a reload changed in the target set, if
// anything: the targets added, removed and changed (counts, and the first
// few names).
func (r *reloader) logTargetChanges(trigger string, old, nc *config.Config) {
	if old == nil {
		return
	}
	before := map[string]config.Target{}
	for _, t := range old.Targets {
		before[t.Name] = t
	}
	var added, changed, removed []string
	for _, t := range nc.Targets {
		b, ok := before[t.Name]
		switch {
		case !ok:
			added = append(added, t.Name)
		case !reflect.DeepEqual(b, t):
			changed = append(changed, t.Name)
		}
		delete(before, t.Name)
	}
	for n := range before {
		removed = append(removed, n)
	}
	if len(added)+len(changed)+len(removed) == 0 {
		return
	}
	slices.Sort(removed)
	r.log.Info("target set changed", "trigger", trigger, "targets", len(nc.Targets),
		"added", len(added), "changed", len(changed), "removed", len(removed),
		"added_names", firstFew(added), "changed_names", firstFew(changed), "removed_names", firstFew(removed))
}

// firstFew is at most 10 names, then "…".
func firstFew(names []string) []string {
	const most = 10
	if len(names) <= most {
		return names
	}
	return append(slices.Clip(names[:most]), "…")
}
