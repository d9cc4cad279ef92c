package daemon

// lifecycleReload is what POST /-/reload runs: Options.Reload, when
// admin.enable_lifecycle is on (read at start, as admin.listen is); nil
// otherwise, and /-/reload answers 403.
func (d *Daemon) lifecycleReload() func() error {
	if d.opts.Reload == nil || !d.opts.Config.Admin.EnableLifecycle {
		return nil
	}
	return func() error { return d.opts.Reload("POST /-/reload") }
}

// Started is closed once Run has started the targets: from then on Reload
// can swap them (a SIGHUP that arrived during start-up waits for it).
func (d *Daemon) Started() <-chan struct{} { return d.started }
