package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/hostload"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// probeFlags are probe's flags: the target's (targetFlags, each a key of
// a config.Target) and the run's shape (rate, duration, closed loop,
// drain, spin, outputs), which describe a run, not a target.
type probeFlags struct {
	target     targetFlags
	rate       float64
	duration   time.Duration
	drain      time.Duration
	users      int
	think      string
	ledgerPath string
	jsonOut    bool
	htmlPath   string
	spin       time.Duration
}

func (p *probeFlags) register(fs *pflag.FlagSet) {
	t := &p.target
	t.register(fs, config.OneShot())
	fs.Float64Var(&p.rate, "rate", 5, "open loop: arrival rate, requests per second")
	fs.DurationVar(&p.duration, "duration", 10*time.Second, "arrival window: arrivals are planned in [0, duration)")
	t.bind(fs,
		keyFlag{"arrival", "baseline.arrival", "arrival process: poisson|constant|gamma"},
		keyFlag{"burstiness", "baseline.burstiness", "gamma shape k (CV = 1/sqrt(k)); 1 = Poisson, <1 burstier"},
		keyFlag{"max-in-flight", "max_in_flight", "in-flight cap; arrivals that find it full are recorded unsent/client_cap (0: none)"},
	)
	fs.DurationVar(&p.drain, "drain", config.Defaults().Drain.Timeout.D(), "after the window, wait this long for in-flight requests; the rest are censored")
	t.bind(fs,
		keyFlag{"max-tokens", "classes[0].output.value", "max_tokens sent with each request"},
		keyFlag{"prompt-tokens", "classes[0].input.value", "length of the synthetic prompt, in tokens (≈4 characters each)"},
	)
	fs.IntVar(&p.users, "closed-loop-users", 0, "run CLOSED LOOP with N users instead of the open-loop schedule (for comparison)")
	fs.StringVar(&p.think, "think-time", "constant:0s", "closed loop think time: D (constant) | constant:D | exponential:MEAN | lognormal:MEAN:SIGMA")
	fs.StringVar(&p.ledgerPath, "ledger", "", "write the request ledger as JSONL to this file")
	fs.BoolVar(&p.jsonOut, "json", false, "print the report as one JSON object")
	fs.StringVar(&p.htmlPath, "html", "", "also write a self-contained HTML report (header with version, command, target, model, API, window, arrivals, seed, gates and host evidence; outcomes; latency percentiles)")
	t.registerSeed(fs, "seed for arrivals, think times and prompts (0: derived from the target name)")
	t.bind(fs,
		keyFlag{"slo-ttft", "classes[0].gates.ttft", "gate: time to first token (from planned send); 0 = none"},
		keyFlag{"slo-tpot", "classes[0].gates.tpot", "gate: time per output token; 0 = none"},
		keyFlag{"slo-e2e", "classes[0].gates.e2e", "gate: end-to-end latency (from planned send); 0 = none"},
		keyFlag{"good-fraction", "ladder.good_fraction_target", "with a --slo-* gate: exit 5 (gates failed) when good/planned is below this"},
		keyFlag{"max-lag-p99", "ladder.max_lag_p99", "validity: largest acceptable dispatch-lag p99"},
		keyFlag{"rate-tolerance", "ladder.rate_tolerance", "validity: accepted relative deviation of achieved from requested rate"},
	)
	fs.DurationVar(&p.spin, "spin", 0, "spin-wait the last part of each arrival wait for tighter dispatch (costs CPU)")
	t.bind(fs,
		keyFlag{"cancel-fraction", "cancellation.fraction", "cancellation injection: fraction of requests cancelled after --cancel-after"},
		keyFlag{"cancel-after", "cancellation.delay", "cancellation injection: delay after dispatch"},
	)
	t.registerRetries(fs)
	t.keys["classes[0].input"] = "--prompt-tokens"
	t.keys["classes[0].output"] = "--max-tokens"
}

func (p *probeFlags) validate() error {
	switch {
	case p.users < 0:
		return badFlag("--closed-loop-users: must be ≥ 0, got %d", p.users)
	case p.users == 0 && !(p.rate > 0):
		return badFlag("--rate: must be > 0, got %v", p.rate)
	case !(p.duration > 0):
		return badFlag("--duration: must be > 0, got %v", p.duration)
	case p.drain < 0:
		return badFlag("--drain: must be ≥ 0, got %v", p.drain)
	case p.spin < 0:
		return badFlag("--spin: must be ≥ 0, got %v", p.spin)
	}
	if _, err := parseThink(p.think); err != nil {
		return badFlag("--think-time %q: %v", p.think, err)
	}
	return p.target.validate()
}

// parseThink parses "kind:mean[:sigma]", or a bare duration (constant).
func parseThink(s string) (schedule.ThinkSpec, error) {
	if !strings.Contains(s, ":") {
		mean, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return schedule.ThinkSpec{}, fmt.Errorf("want a duration (constant), constant:D, exponential:MEAN or lognormal:MEAN:SIGMA")
		}
		spec := schedule.ThinkSpec{Kind: schedule.ThinkConstant, Mean: mean}
		return spec, spec.Validate()
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return schedule.ThinkSpec{}, fmt.Errorf("want a duration (constant), constant:D, exponential:MEAN or lognormal:MEAN:SIGMA")
	}
	k, err := schedule.ParseThinkKind(parts[0])
	if err != nil {
		return schedule.ThinkSpec{}, err
	}
	mean, err := time.ParseDuration(parts[1])
	if err != nil {
		return schedule.ThinkSpec{}, fmt.Errorf("mean: %w", err)
	}
	spec := schedule.ThinkSpec{Kind: k, Mean: mean}
	if len(parts) == 3 {
		if spec.Sigma, err = strconv.ParseFloat(parts[2], 64); err != nil {
			return spec, fmt.Errorf("sigma: %w", err)
		}
	}
	return spec, spec.Validate()
}

// gates are the probe's class gates (--slo-*).
func (p *probeFlags) gates() stats.Gates { return wiring.Gates(p.target.target().Classes[0].Gates) }

func runProbe(ctx context.Context, e env, args []string) error {
	var p probeFlags
	fs := newFlagSet("probe", e)
	p.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := p.validate(); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	base, stopTarget, err := p.target.startTarget(e)
	if err != nil {
		return err
	}
	defer stopTarget()
	client, target, err := p.target.build(base, log)
	if err != nil {
		return err
	}
	e.std.useClient(client.Redactor())
	defer client.CloseIdleConnections()
	started := time.Now()
	run, err := p.execute(ctx, e, client, target)
	if err != nil {
		return err
	}
	if p.htmlPath != "" {
		m := reportMeta(&p.target, base, "probe", args, client.Redactor(), target.Adapter.Name(), p.duration, "window")
		m.Started, m.Seed, m.SeedSet = started, wiring.Seed(*p.target.target()), true
		m.Arrival = arrivalName(p.target.target().Baseline.Arrival, p.target.target().Baseline.Burstiness)
		if p.users > 0 {
			m.Arrival = fmt.Sprintf("closed loop, %d users, think time %s", p.users, p.think)
		}
		if err := writeFile(p.htmlPath, func(f *os.File) error { return report.ProbeHTML(f, run.sum, m) }); err != nil {
			return err
		}
	}
	if p.jsonOut {
		pj := report.ProbeOf(run.sum)
		pj.AddServer(run.server, run.sum)
		err = report.ProbeJSON(e.stdout, pj)
	} else if err = report.Text(e.stdout, run.sum); err == nil {
		err = report.ServerText(e.stdout, run.server, run.sum)
	}
	if err != nil {
		return err
	}
	// The report is printed either way; a broken ledger invariant is a bug
	// in llmprobe and fails the run. Otherwise the exit code says what
	// happened (see exitCodes).
	if run.ledgerErr != nil {
		return run.ledgerErr
	}
	return probeExit(run.sum, !p.gates().IsZero(), p.target.target().Ladder.GoodFractionTarget, run.lost, run.lostErr)
}

// probeRun is what a probe run left: its summary, and what went wrong with
// its ledger.
type probeRun struct {
	sum       stats.Summary
	ledgerErr error               // a broken ledger invariant (a bug: exit 1)
	lost      int                 // records missing from the --ledger file
	lostErr   error               // why the --ledger file is incomplete
	server    *servermetrics.View // the server's own view of the run (--server-metrics), or nil
}

// execute runs the probe and returns its summary. The ledger file, when
// asked for, is complete even when the run is interrupted.
func (p *probeFlags) execute(ctx context.Context, e env, client *protocol.Client, target protocol.Target) (run probeRun, err error) {
	tg := p.target.target()
	classes, err := wiring.Classes(*tg, 0)
	if err != nil {
		return run, badFlag("%v", err)
	}
	mix, err := wiring.Mix(*tg, classes[0], 0)
	if err != nil {
		return run, badFlag("%v", err)
	}
	mode := ledger.ModeOpen
	requested := p.rate
	if p.users > 0 {
		mode, requested = ledger.ModeClosed, 0
	}
	epoch := time.Now()
	var sinks []ledger.Sink
	var records []ledger.Record
	var recMu sync.Mutex
	sinks = append(sinks, ledger.SinkFunc(func(r *ledger.Record) {
		recMu.Lock()
		records = append(records, *r)
		recMu.Unlock()
	}))
	var file *ledger.FileSink
	if p.ledgerPath != "" {
		v := currentBuild().Version
		f, err := ledger.CreateFileSink(p.ledgerPath, ledger.RunHeader{
			Kind: "run", RunID: fmt.Sprintf("probe-%d", epoch.UnixNano()), Epoch: epoch,
			EpochUnixNano: epoch.UnixNano(), Mode: mode, Version: v, Schema: ledger.SchemaVersion,
		})
		if err != nil {
			return run, fmt.Errorf("--ledger: %w", err)
		}
		file = f
		sinks = append(sinks, f)
	}
	led := ledger.New(epoch, sinks...)
	g := dispatch.NewGroup(led)

	boundary, _ := ledger.ParseTTFTBoundary(tg.TTFTBoundary) // checked by validate
	meta := func(time.Duration) ledger.Meta {
		return ledger.Meta{Traffic: ledger.TrafficProbe, Target: "probe", Class: "default", API: target.Adapter.Name(),
			TTFTBoundary: boundary}
	}
	exec := client.Exec(target, func(*ledger.Record) protocol.Params {
		prm := mix.Next().Params
		prm.Model = tg.Model
		prm.UsageDeltas = tg.UsageDeltas
		return prm
	}, led.Now)
	if in, ok := wiring.Injection(*tg, 0); ok {
		if exec, err = dispatch.Inject(in, exec); err != nil {
			return run, badFlag("--cancel-fraction/--cancel-after: %v", err)
		}
	}
	retry, err := wiring.Retry(*tg)
	if err != nil {
		return run, badFlag("%v", err)
	}

	// The server's own view of the run (--server-metrics): opened before
	// the first arrival, ended after the drain; never fails the run.
	srv, err := openServerView(ctx, *tg, client)
	if err != nil {
		return run, err
	}
	defer srv.Close() // a run that fails before its end scrape abandons the window
	// The run's context: the first interrupt stops arrivals (the window ends
	// early) and drains; the drain itself is bounded by --drain.
	start := led.Now()
	var runErr error
	hostReader := hostload.NewReader()
	hostBefore := hostReader.Take()
	if mode == ledger.ModeOpen {
		seq, err := wiring.Arrivals(*tg, 0, p.rate)
		if err != nil {
			return run, badFlag("--rate/--arrival/--burstiness: %v", err)
		}
		runErr = g.Open(ctx, dispatch.OpenConfig{
			Arrivals: seq, Start: start, Window: p.duration, MaxInFlight: tg.MaxInFlight,
			Meta: meta, Exec: exec, Retry: retry, Spin: p.spin,
		})
	} else {
		think, _ := parseThink(p.think)
		runErr = g.Closed(ctx, dispatch.ClosedConfig{
			Users: p.users, Think: think, Seed: wiring.Seed(*tg), Start: start, Window: p.duration, Meta: meta, Exec: exec, Retry: retry,
			Backoff: wiring.Backoff(*tg),
		})
	}
	// The prober host's health over the arrival window (when requests were
	// dispatched) tells a starved prober from a slow target.
	host := hostload.Between(hostBefore, hostReader.Take())
	// An interrupt that ended the arrivals early shortens the window: the
	// cohort is what was planned before it, and rates are judged over the
	// time the schedule actually ran, not the time asked for.
	window := p.duration
	if arrivalsEnd := led.Now() - start; ctx.Err() != nil && arrivalsEnd < window {
		window = max(arrivalsEnd, time.Millisecond)
	}
	if !p.jsonOut {
		fmt.Fprintf(e.stderr, "arrival window over; draining up to %s (in flight: %d)\n", stats.FormatDuration(p.drain), g.InFlight())
	}
	// A second interrupt during the drain cancels what is still in flight.
	g.Drain(e.hard, p.drain)
	run.server = srv.End(ctx)
	if err := led.Verify(); err != nil {
		fmt.Fprintf(e.stderr, "LEDGER INVARIANT VIOLATED: %v\n", err)
		run.ledgerErr = fmt.Errorf("ledger invariant violated: %w", err)
	}
	if file != nil {
		// A ledger that could not be written is a failed run (exit 7): the
		// report is still printed, and the error names the OS error.
		closeErr := file.Close() // every write error seen, or nil
		if n, err := file.Err(); n > 0 || err != nil || closeErr != nil {
			if closeErr != nil {
				err = closeErr
			}
			run.lost = n
			run.lostErr = fmt.Errorf("--ledger %s: %d records not written: %w", p.ledgerPath, n, err)
			fmt.Fprintf(e.stderr, "ledger file: %v\n", run.lostErr)
		}
	}
	if runErr != nil {
		return run, runErr
	}
	recMu.Lock()
	defer recMu.Unlock()
	acc := stats.NewAccumulator(stats.Config{
		Mode: mode, RequestedRate: requested, Start: start, Window: window, Gates: p.gates(),
		Validity: wiring.Validity(tg.Ladder),
	})
	for i := range records {
		acc.Add(&records[i])
	}
	acc.SetHost(host)
	run.sum = acc.Summary()
	if window < p.duration {
		run.sum.Validity.Notes = append(run.sum.Validity.Notes, fmt.Sprintf(
			"interrupted: arrivals stopped after %s of the %s window; figures cover the arrivals planned before that",
			stats.FormatDuration(window), stats.FormatDuration(p.duration)))
	}
	return run, nil
}
