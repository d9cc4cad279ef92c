package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmprobe/llmprobe/internal/admin"
	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/fleet"
	"github.com/llmprobe/llmprobe/internal/hostload"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/probehandler"
	"github.com/llmprobe/llmprobe/internal/protocol/sse"
	"github.com/llmprobe/llmprobe/internal/telemetry"
)

// Options configure a Daemon.
type Options struct {
	Config   *config.Config
	Logger   *slog.Logger
	Build    telemetry.BuildInfo
	Recorder *telemetry.Recorder // required: the one recorder for Prometheus and OTel
	Tracing  *telemetry.Tracing  // optional: a client span per probe request, traceparent sent
	// Listener serves the admin endpoints; nil listens on Config.Admin.Listen.
	Listener net.Listener
	// Now is the wall clock (budgets, ladder timetable); nil = time.Now.
	Now func() time.Time
	// Interrupt, when cancelled, cuts the shutdown drain short: what is still
	// in flight is recorded cancelled/interrupted. nil = never.
	Interrupt context.Context
	// Tick is how often gauges are refreshed and retired streams are
	// reaped; 0 = 1s. Gauges are also refreshed at every scrape.
	Tick time.Duration
	// Sinks receive every finished record too, after the daemon's own
	// (tests, embedding). Optional.
	Sinks []ledger.Sink
	// Load loads the configuration again, through the layers it was first
	// loaded from, and validates it: what every reload (Daemon.Reload:
	// SIGHUP, POST /-/reload when admin.enable_lifecycle is on, a target
	// file's change) applies. nil: the daemon cannot reload, and /-/reload
	// answers 403.
	Load func() (*config.Config, error)
	// Reloaders are applied, in order, to each configuration a reload
	// runs, once the daemon's own targets took it (reload.go).
	Reloaders []Reloader
	// ReloadMetric, when set, exports each reload's outcome
	// (llmprobe_config_last_reload_*).
	ReloadMetric *telemetry.ConfigReload
	// FailureLogEvery is how often a target that keeps failing gets a
	// summary log line; 0 = 1m.
	FailureLogEvery time.Duration
	// IdentityEvery, when set, overrides every target's identity.poll_every:
	// how often GET {base}/models is polled for a target with
	// identity.response_header or identity.models_field (tests).
	IdentityEvery time.Duration
	// Hostname names the host for fleet.shard auto (nil: $HOSTNAME, else
	// the kernel's). See fleet.go.
	Hostname func() (string, error)
}

// Daemon is one running prober.
type Daemon struct {
	opts  Options
	log   *slog.Logger
	now   func() time.Time
	start time.Time
	// ticks counts the run loop's ticks: which targets' turn it is
	// (inTurn).
	ticks atomic.Uint64

	led   *ledger.Ledger
	group *dispatch.Group
	rec   *telemetry.Recorder
	ring  *ledger.Ring
	rot   *ledger.RotatingSink
	route *router
	// buffers is the process-wide bound on buffered event bytes
	// (limits.max_buffered_bytes), shared by every target's client.
	buffers *sse.Budget
	host    *hostload.Sampler // the prober host's health over the live verdict's window
	turns   *ladderTurns      // ladders take turns (limits.max_concurrent_ladders)
	node    *fleet.Node       // this prober's place in its fleet (fleet.go)

	probe *probehandler.Handler // the /probe endpoint

	ready atomic.Bool
	// started is closed when Run has started the targets (Started).
	started chan struct{}

	// swapMu serialises what changes the running target set: Run's start,
	// a reload's apply and shutdown, and guards phase.
	swapMu sync.Mutex
	phase  phase
	// reloadMu serialises reloads, from the load to the last reloader.
	reloadMu sync.Mutex

	mu      sync.Mutex
	cfg     *config.Config
	targets map[string]*targetRun
	// retired are runs a reload replaced: stopped, but their goroutines may
	// still be returning and their requests still in flight. The tick reaps
	// them; shutdown waits for them.
	retired []*targetRun
	state   map[string]*targetState  // survives reloads: budgets, in flight, validity, identity
	last    map[string]ladder.Result // last ladder per target
	lastSVG string
}

// phase is where a Daemon is in its life: Run moves it from phaseNew to
// phaseRunning, and shutdown (or a Run that fails to start) to
// phaseStopped. It only moves forward.
type phase int

const (
	phaseNew     phase = iota // built by New, Run not called
	phaseRunning              // Run started the targets; a reload may swap them
	phaseStopped              // shut down, or Run failed to start
)

func (p phase) String() string {
	switch p {
	case phaseNew:
		return "not started"
	case phaseRunning:
		return "running"
	case phaseStopped:
		return "stopped"
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// New builds a daemon from a validated configuration. Nothing is started
// until Run.
func New(o Options) (*Daemon, error) {
	if o.Config == nil || o.Recorder == nil {
		return nil, errors.New("daemon: a config and a recorder are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Interrupt == nil {
		o.Interrupt = context.Background()
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	if o.Recorder.Registry() == nil {
		return nil, errors.New("daemon: the recorder must own its registry (telemetry.Options.Registerer unset)")
	}
	d := &Daemon{
		opts: o, log: o.Logger, now: o.Now, rec: o.Recorder,
		route: newRouter(), targets: map[string]*targetRun{}, state: map[string]*targetState{}, last: map[string]ladder.Result{},
		cfg: o.Config, buffers: sse.NewBudget(o.Config.Limits.MaxBufferedBytes), started: make(chan struct{}),
		turns: newLadderTurns(o.Config.Limits.MaxConcurrentLadders),
	}
	if err := d.initFleet(o); err != nil {
		return nil, err
	}
	start := time.Now()
	keep := o.Config.Ledger.DebugKeep
	if keep <= 0 {
		keep = 200
	}
	d.ring = ledger.NewRing(keep, keep*5)
	probes := probehandler.NewCollector() // hands /probe its own records
	sinks := []ledger.Sink{d.rec, d.ring, d.route, probes}
	sinks = append(sinks, o.Sinks...)
	if dir := o.Config.Ledger.Dir; dir != "" {
		rot, err := ledger.NewRotatingSink(ledger.RotatingOptions{
			Path: filepath.Join(dir, "ledger.jsonl"), MaxBytes: int64(o.Config.Ledger.MaxSizeMB) << 20,
			MaxAge: o.Config.Ledger.MaxAge.D(), Keep: o.Config.Ledger.Keep, Logger: o.Logger,
			Header: ledger.RunHeader{Kind: "run", RunID: fmt.Sprintf("daemon-%d", start.UnixNano()), Epoch: start,
				EpochUnixNano: start.UnixNano(), Mode: ledger.ModeOpen, Version: o.Build.Version, Schema: ledger.SchemaVersion},
		})
		if err != nil {
			return nil, fmt.Errorf("daemon: ledger.dir: %w", err)
		}
		if err := telemetry.WatchLedgerSink(d.rec.Registry(), rot); err != nil {
			_ = rot.Close()
			return nil, fmt.Errorf("daemon: ledger.dir: %w", err)
		}
		d.rot = rot
		sinks = append(sinks, rot)
	}
	d.start = start
	d.host = hostload.NewSampler(hostload.NewReader(), validityWindow)
	if err := telemetry.WatchHost(d.rec.Registry(), func() telemetry.HostCounters { return hostCounters(d.host.Totals()) }); err != nil {
		d.closeSinks()
		return nil, fmt.Errorf("daemon: %w", err)
	}
	if err := telemetry.WatchLadderTurns(d.rec.Registry(), o.Config.Region, d.ladderCounts); err != nil {
		d.closeSinks()
		return nil, fmt.Errorf("daemon: %w", err)
	}
	d.led = ledger.New(start, sinks...)
	d.group = dispatch.NewGroup(d.led)
	var err error
	if d.probe, err = d.newProbeHandler(probes); err != nil {
		d.closeSinks()
		return nil, fmt.Errorf("daemon: %w", err)
	}
	return d, nil
}

// Run starts the admin server and every target, and blocks until ctx ends;
// it then stops planning, drains in-flight requests up to the drain timeout
// (the rest are censored), closes the sinks and returns. Reload applies a
// new configuration meanwhile (reload.go).
func (d *Daemon) Run(ctx context.Context) error {
	cfg := d.opts.Config
	d.swapMu.Lock()
	if d.phase != phaseNew {
		d.swapMu.Unlock()
		return errors.New("daemon: Run called twice")
	}
	runs, err := d.build(cfg)
	if err != nil {
		d.phase = phaseStopped
		d.swapMu.Unlock()
		d.closeSinks()
		return err
	}
	adminCtx, stopAdmin := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAdmin()
	srv := admin.NewServerWith(admin.ServerOptions{Handler: d.handler(), Addrs: []string{cfg.Admin.Listen},
		WebConfigFile: cfg.Admin.WebConfigFile, HealthWithoutAuth: cfg.Admin.HealthWithoutAuth, Logger: d.log})
	adminErr := make(chan error, 1)
	go func() {
		if d.opts.Listener != nil {
			adminErr <- srv.Serve(adminCtx, d.opts.Listener)
		} else {
			adminErr <- srv.Run(adminCtx)
		}
	}()

	stopFleet := d.startFleet()
	defer stopFleet()
	d.swap(cfg, runs)
	d.phase = phaseRunning
	close(d.started)
	d.swapMu.Unlock()
	d.ready.Store(true)
	d.log.Info("llmprobe running", "targets", len(runs), "admin", cfg.Admin.Listen)

	tick := time.NewTicker(d.opts.Tick)
	defer tick.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-adminErr:
			if err != nil {
				d.log.Error("admin server stopped", "err", err)
				d.shutdown()
				return fmt.Errorf("admin server: %w", err)
			}
		case <-tick.C:
			d.ticks.Add(1)
			d.host.Tick()
			d.refreshTargets(true)
			d.logStateChanges()
			d.reap(false)
		}
	}
	d.shutdown()
	stopAdmin()
	<-adminErr
	return nil
}

// shutdown stops every stream and ladder, drains and closes the sinks.
func (d *Daemon) shutdown() {
	d.ready.Store(false)
	d.swapMu.Lock()
	d.phase = phaseStopped
	d.mu.Lock()
	runs := d.targets
	d.targets = map[string]*targetRun{}
	drain := d.cfg.Drain.Timeout.D()
	d.mu.Unlock()
	d.swapMu.Unlock()
	for _, r := range runs {
		r.stop()
	}
	d.log.Info("draining", "in_flight", d.group.InFlight(), "timeout", drain)
	censored := d.group.Drain(d.opts.Interrupt, drain)
	for _, r := range runs {
		r.wait()
	}
	d.reap(true)
	if censored > 0 {
		d.log.Warn("requests still in flight at the drain deadline were recorded censored", "censored", censored)
	}
	// Every request belongs to the group, so nothing can be pending once
	// it drained and the streams returned; should one be, end it rather
	// than leave a hole in the ledger.
	if c := d.led.Counts(); c.Pending > 0 {
		n := d.led.CensorPending()
		d.log.Error("records still pending after the drain were ended", "pending", c.Pending, "censored", n)
	}
	if err := d.led.Verify(); err != nil {
		d.log.Error("ledger invariant violated", "err", err)
	}
	c := d.led.Counts()
	d.log.Info("stopped", "planned", c.Planned, "dispatched", c.Dispatched, "unsent", c.Unsent,
		"censored", c.ByOutcome[ledger.Censored], "pending", c.Pending)
	d.closeSinks()
	for _, r := range runs {
		d.rec.SetInFlight(r.name, 0, 0)
	}
	d.refreshGauges()
}

// closeSinks flushes and closes the ledger files.
func (d *Daemon) closeSinks() {
	if d.rot != nil {
		if err := d.rot.Close(); err != nil {
			d.log.Error("ledger files", "err", err)
		}
	}
}

// reap finishes the runs a reload retired once their goroutines returned
// and their requests finished (all of them when wait): it closes their
// idle connections and, for a target no longer configured, drops its
// series and sink only then (its state is kept: a budget spent today stays
// spent if the target comes back), so that its last records still reach
// the metrics and cannot re-create series after they were dropped.
func (d *Daemon) reap(wait bool) {
	d.mu.Lock()
	var done []*targetRun
	keep := d.retired[:0]
	for _, r := range d.retired {
		if wait || r.finished() {
			done = append(done, r)
		} else {
			keep = append(keep, r)
		}
	}
	d.retired = keep
	d.mu.Unlock()
	for _, r := range done {
		r.wait()
		d.mu.Lock()
		_, still := d.targets[r.name]
		d.mu.Unlock()
		if !still && !wait {
			d.route.remove(r.name)
			d.rec.ForgetTarget(r.name)
		}
	}
}

// stateFor returns the state a target keeps across reloads.
func (d *Daemon) stateFor(name string) *targetState {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.state[name]
	if s == nil {
		s = newTargetState()
		d.state[name] = s
	}
	return s
}

// swap stops the running targets and starts runs.
func (d *Daemon) swap(cfg *config.Config, runs map[string]*targetRun) {
	d.mu.Lock()
	old := d.targets
	d.targets = runs
	d.cfg = cfg
	for _, r := range old {
		d.retired = append(d.retired, r)
	}
	d.mu.Unlock()
	for _, r := range old {
		r.stop()
	}
	for _, r := range runs {
		if r.budget != nil {
			r.budget.SetLimits(r.budgetLimits)
		}
		r.start(d)
	}
}

// build makes a targetRun per target without starting anything.
func (d *Daemon) build(cfg *config.Config) (map[string]*targetRun, error) {
	runs := make(map[string]*targetRun, len(cfg.Targets))
	var errs []error
	for i, t := range cfg.Targets {
		r, err := newTargetRun(d, cfg, i, t)
		if err != nil {
			errs = append(errs, fmt.Errorf("targets[%d] (%s): %w", i, t.Name, err))
			continue
		}
		runs[t.Name] = r
	}
	if err := errors.Join(errs...); err != nil {
		for _, r := range runs {
			r.client.CloseIdleConnections()
		}
		return nil, err
	}
	return runs, nil
}
