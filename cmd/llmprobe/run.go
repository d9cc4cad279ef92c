package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/admin"
	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/daemon"
	"github.com/llmprobe/llmprobe/internal/logging"
	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/telemetry"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// builtInConfig is the daemon's configuration when no --config.file is given: it
// probes the built-in simulator, started in-process on 127.0.0.1.
const builtInConfig = `
admin:
  listen: "127.0.0.1:9464"
targets:
  - name: sim
    url: SIM_URL
    api: openai-chat
    model: llmprobe-sim
    max_in_flight: 256
    timeouts: {connect: 2s, headers: 10s, first_content: 15s, idle: 10s, total: 60s}
    baseline: {rate: 2, arrival: poisson}
    server_metrics: {url: SIM_METRICS_URL}
    classes:
      - name: chat
        weight: 3
        input: {dist: fixed, value: 128}
        output: {dist: fixed, value: 64}
        gates: {ttft: 500ms, e2e: 5s}
      - name: long
        weight: 1
        input: {dist: uniform, min: 512, max: 2048}
        output: {dist: fixed, value: 256}
        gates: {ttft: 1s, e2e: 15s}
        cache_bust_fraction: 1
    ladder:
      enabled: true
      schedule: {every: 10m}
      run_on_start: true
      steps: [2, 5, 10, 20, 40]
      step_duration: 20s
      gap: 5s
      max_rate: 50
      run_on_identity_change: true
`

// builtInSim is the simulator the built-in configuration probes: 16 slots
// of ~0.7 s service each, so its capacity is near 23 req/s.
func builtInSim() sim.Config {
	c := sim.DefaultConfig()
	c.Slots, c.AdmissionLimit = 16, 64
	return c
}

func runDaemon(ctx context.Context, e env, args []string) error {
	fs := newFlagSet("run", e)
	path := configFileFlags(fs, "YAML config file (default: probe the built-in simulator started in-process)")
	shard := fs.String("shard", "", shardHelp)
	config.RegisterFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	deprecated, err := deprecatedFlags(fs)
	if err != nil {
		return err
	}
	overrides, err := shardOverrides(*shard)
	if err != nil {
		return err
	}
	opts := config.Options{Path: *path, Flags: fs, Overrides: overrides, OverridesFrom: "flag --shard"}
	// load is every load, at start and on each reload: a configuration's
	// secrets are learned by the standard library's log as soon as it
	// loads, before any target of it sends.
	load := func() (*config.Config, error) {
		c, err := wiring.Load(opts)
		if err == nil {
			e.std.useConfig(c)
		}
		return c, err
	}
	if *path == "" {
		s, err := sim.New(builtInSim())
		if err != nil {
			return fmt.Errorf("built-in simulator: %w", err)
		}
		u, closeSim, err := s.Start("127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("built-in simulator: %w", err)
		}
		defer func() { _ = closeSim() }()
		fmt.Fprintf(e.stderr, "no --config.file: probing the built-in simulator at %s\n", u)
		yaml := []byte(strings.NewReplacer("SIM_URL", u, "SIM_METRICS_URL", simMetricsURL(u)).Replace(builtInConfig))
		opts.BuiltIn = yaml
	}
	cfg, err := load()
	if err != nil {
		return asFlagError(err)
	}
	// The admin server would only find a bad web config once it starts:
	// checked now, as validate does, naming the key and the file.
	if err := webConfig(cfg); err != nil {
		return err
	}
	log, level, err := logging.Setup(e.stderr, cfg.Log.Level, cfg.Log.Format) // the subcommand's stderr, where env says
	if err != nil {
		return badFlag("log: %v", err)
	}
	for _, d := range deprecated {
		log.Warn("deprecated flag: it still works, but use the new name", "flag", "--"+d[0], "use", "--"+d[1])
	}
	logWarnings(log, cfg)
	b := currentBuild()
	build := telemetry.BuildInfo{Version: b.Version, Revision: b.Revision} // GoVersion: runtime.Version(), filled by telemetry
	log.Info("starting llmprobe", "version", b.Version, "revision", b.Revision, "branch", b.Branch, "build_date", b.BuildDate, "go", b.GoVersion)
	setMemoryLimit(log, nil)

	exemplars := cfg.Telemetry.Exemplars
	if exemplars == 0 {
		exemplars = -1 // telemetry.exemplars 0 is none; the Options' 0 is the default
	}
	tel, err := telemetry.Start(ctx, telemetry.StackOptions{
		Build:   build,
		OTel:    cfg.OTel.Enabled,
		Tracing: cfg.OTel.Enabled && cfg.OTel.Tracing,
		Getenv:  os.LookupEnv,
		Region:  cfg.Region,
		Options: telemetry.Options{Logger: log, ClassicHistograms: cfg.Telemetry.ClassicHistograms, Exemplars: exemplars},
	})
	if err != nil {
		return err // already says "telemetry: …"
	}
	defer func() {
		if err := tel.Shutdown(context.Background()); err != nil { // flushes the OTLP exporters
			log.Warn("otel shutdown", "err", err)
		}
	}()
	switch {
	case tel.MeterProvider != nil:
		log.Info("OTLP metrics export on", "endpoint", otlpHost(e.getenv))
	case cfg.OTel.Enabled:
		log.Warn("otel.enabled but no OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: OTLP metrics export off")
	}
	// SIGHUP (caught by main from the start), POST /-/reload and a change
	// of the target files reload through the daemon's one path
	// (daemon.Reload: load, the targets, then rl's reloaders): a config
	// that fails to load, validate or build is refused and the running one
	// kept.
	loaded, err := telemetry.NewConfigReload(tel.Recorder.Registry(), cfg.Region)
	if err != nil {
		return err
	}
	loaded.Set(true, time.Now()) // the configuration at start loaded
	files, err := telemetry.NewTargetFiles(tel.Recorder.Registry(), cfg.Region)
	if err != nil {
		return err
	}
	rl := &reloader{level: level, log: log, files: files}
	rl.running(cfg)
	d, err := daemon.New(daemon.Options{Config: cfg, Logger: log, Build: build, Recorder: tel.Recorder, Tracing: tel.Tracing, Interrupt: e.hard,
		Load: load, Reloaders: rl.reloaders(), ReloadMetric: loaded})
	if err != nil {
		return err
	}
	rl.reload = d.Reload
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go rl.onSignal(runCtx, e.hup)
	go rl.watchTargetFiles(runCtx)
	return d.Run(runCtx)
}

// logWarnings logs what a valid configuration does that cannot work, or
// that its author may not mean (wiring.Warnings): at start and after each
// reload; `validate` refuses the first kind.
func logWarnings(log *slog.Logger, cfg *config.Config) {
	for _, w := range wiring.Warnings(cfg) {
		log.Warn("configuration warning", "key", w.Key, "warning", w.Msg)
	}
}

// otlpHost names where OTLP metrics go, host (and port) only: the
// endpoint's path, query and any credentials in it are never logged, and
// the host passes the one sanitiser.
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT wins over OTEL_EXPORTER_OTLP_ENDPOINT,
// as in the exporter; a gRPC endpoint may be written without a scheme.
func otlpHost(getenv func(string) string) string {
	v := getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
	if v == "" {
		v = getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if !strings.Contains(v, "://") {
		v = "http://" + v
	}
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || u.Host == "" {
		return "(unreadable endpoint)"
	}
	return sanitize.String(u.Host, 256)
}

// webConfig checks admin.web_config_file (exporter-toolkit's own check),
// naming the configuration's source and the key.
func webConfig(cfg *config.Config) error {
	if err := admin.ValidateWebConfig(cfg.Admin.WebConfigFile); err != nil {
		return fmt.Errorf("%s: admin.web_config_file: %w", cfg.Source("admin.web_config_file"), err)
	}
	return nil
}
