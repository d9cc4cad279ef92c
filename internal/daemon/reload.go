package daemon

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
)

// Reloader applies a configuration the daemon now runs to one other part
// of the process (the log level, the configuration's warnings, the target
// files' poller, labels on /metrics), as Prometheus' reloaders take theirs
// in ApplyConfig. Apply is only told configurations the daemon's targets
// took; an error marks the reload failed (the targets stay swapped, as in
// Prometheus, and the log and the reload metric say so).
type Reloader struct {
	Name  string
	Apply func(*config.Config) error
}

// startWait bounds how long a reload waits for the daemon to start.
const startWait = 30 * time.Second

// Reload is the one reload path, whatever asked for it (trigger: "SIGHUP",
// "POST /-/reload", "target_files changed"): it loads the configuration
// again (Options.Load), builds every target of it and swaps them in (a
// configuration that does not load or whose targets cannot all be built is
// refused, the running one kept), applies it to each of Options.Reloaders
// in order, logs the outcome once and exports it (Options.ReloadMetric).
// One reload runs at a time. A reload asked for while the daemon is still
// starting waits for it (until ctx ends, at most startWait): a SIGHUP is
// never lost.
func (d *Daemon) Reload(ctx context.Context, trigger string) error {
	if d.opts.Load == nil {
		return errors.New("daemon: reload: no configuration source (Options.Load)")
	}
	ctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	select {
	case <-d.started:
	case <-ctx.Done():
		return fmt.Errorf("reload: the daemon has not started: %w", ctx.Err())
	}
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	err := d.reload(trigger)
	if d.opts.ReloadMetric != nil {
		d.opts.ReloadMetric.Set(err == nil, time.Now())
	}
	return err
}

func (d *Daemon) reload(trigger string) error {
	nc, err := d.opts.Load()
	if err != nil {
		d.log.Error("reload refused: the configuration does not load; the old one keeps running", "trigger", trigger, "err", err)
		return err
	}
	old := d.probeConfig()
	if err := d.apply(nc); err != nil {
		d.log.Error("reload refused; the old configuration keeps running", "trigger", trigger, "err", err)
		return err
	}
	var errs []error
	for _, r := range d.opts.Reloaders {
		if err := r.Apply(nc); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		d.log.Error("configuration reloaded in part: the targets run it, but not all of the process took it", "trigger", trigger, "err", err)
		return fmt.Errorf("reload: %w", err)
	}
	d.log.Info("configuration reloaded", "trigger", trigger, "targets", len(nc.Targets))
	d.logTargetChanges(trigger, old, nc)
	return nil
}

// apply builds every target of cfg first and refuses the whole config if
// any fails, so a bad config never replaces a running one; it validates
// nothing itself (Options.Load does). Metrics and in-flight requests
// survive: old streams stop planning, their in-flight requests finish.
func (d *Daemon) apply(cfg *config.Config) error {
	if cfg == nil {
		return errors.New("daemon: reload: no config")
	}
	d.swapMu.Lock()
	defer d.swapMu.Unlock()
	if d.phase != phaseRunning {
		return fmt.Errorf("daemon: reload: the daemon is not running (%s)", d.phase)
	}
	runs, err := d.build(cfg)
	if err != nil {
		return fmt.Errorf("reload: %w", err)
	}
	d.buffers.SetLimit(cfg.Limits.MaxBufferedBytes)
	d.turns.setLimit(cfg.Limits.MaxConcurrentLadders)
	d.swap(cfg, runs)
	return nil
}

// lifecycleReload is what POST /-/reload runs: Reload, when the daemon can
// reload and admin.enable_lifecycle is on (read at start, as admin.listen
// is); nil otherwise, and /-/reload answers 403.
func (d *Daemon) lifecycleReload() func() error {
	if d.opts.Load == nil || !d.opts.Config.Admin.EnableLifecycle {
		return nil
	}
	return func() error { return d.Reload(context.Background(), "POST /-/reload") }
}

// Started is closed once Run has started the targets: from then on Reload
// can swap them (a SIGHUP that arrived during start-up waits for it).
func (d *Daemon) Started() <-chan struct{} { return d.started }

// logTargetChanges logs what a reload changed in the target set, if
// anything: the targets added, removed and changed (counts, and the first
// few names).
func (d *Daemon) logTargetChanges(trigger string, old, nc *config.Config) {
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
	d.log.Info("target set changed", "trigger", trigger, "targets", len(nc.Targets),
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
