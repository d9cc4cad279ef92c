package main

import (
	"context"
	"fmt"
	"log/slog"
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
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/workload"
)

type probeFlags struct {
	target       targetFlags
	rate         float64
	duration     time.Duration
	arrival      string
	burstiness   float64
	maxInFlight  int
	drain        time.Duration
	maxTokens    int
	promptTokens int
	users        int
	think        string
	ledgerPath   string
	jsonOut      bool
	seed         uint64
	sloTTFT      time.Duration
	sloTPOT      time.Duration
	sloE2E       time.Duration
	goodTarget   float64
	maxLagP99    time.Duration
	rateTol      float64
	spin         time.Duration
	cancelFrac   float64
	cancelAfter  time.Duration
	retries      int
	backoff      time.Duration
	maxBackoff   time.Duration
	jitter       float64
	ttftBoundary string
}

func (p *probeFlags) register(fs *pflag.FlagSet) {
	p.target.register(fs)
	def := config.OneShot()
	class := def.Classes[0]
	fs.Float64Var(&p.rate, "rate", 5, "open loop: arrival rate, requests per second")
	fs.DurationVar(&p.duration, "duration", 10*time.Second, "arrival window: arrivals are planned in [0, duration)")
	fs.StringVar(&p.arrival, "arrival", def.Baseline.Arrival, "arrival process: poisson|constant|gamma")
	fs.Float64Var(&p.burstiness, "burstiness", 1, "gamma shape k (CV = 1/sqrt(k)); 1 = Poisson, <1 burstier")
	fs.IntVar(&p.maxInFlight, "max-in-flight", def.MaxInFlight, "in-flight cap; arrivals that find it full are recorded unsent/client_cap (0: none)")
	fs.DurationVar(&p.drain, "drain", config.Defaults().Drain.Timeout.D(), "after the window, wait this long for in-flight requests; the rest are censored")
	fs.IntVar(&p.maxTokens, "max-tokens", class.Output.Value, "max_tokens sent with each request")
	fs.IntVar(&p.promptTokens, "prompt-tokens", class.Input.Value, "length of the synthetic prompt, in tokens (≈4 characters each)")
	fs.IntVar(&p.users, "closed-loop-users", 0, "run CLOSED LOOP with N users instead of the open-loop schedule (for comparison)")
	fs.StringVar(&p.think, "think-time", "constant:0s", "closed loop think time: D (constant) | constant:D | exponential:MEAN | lognormal:MEAN:SIGMA")
	fs.StringVar(&p.ledgerPath, "ledger", "", "write the request ledger as JSONL to this file")
	fs.BoolVar(&p.jsonOut, "json", false, "print the report as one JSON object")
	fs.Uint64Var(&p.seed, "seed", uint64(def.Baseline.Seed), "seed for arrivals, think times and prompts")
	fs.DurationVar(&p.sloTTFT, "slo-ttft", class.Gates.TTFT.D(), "gate: time to first token (from planned send); 0 = none")
	fs.DurationVar(&p.sloTPOT, "slo-tpot", class.Gates.TPOT.D(), "gate: time per output token; 0 = none")
	fs.DurationVar(&p.sloE2E, "slo-e2e", class.Gates.E2E.D(), "gate: end-to-end latency (from planned send); 0 = none")
	fs.Float64Var(&p.goodTarget, "good-fraction", def.Ladder.GoodFractionTarget, "with a --slo-* gate: exit 5 (gates failed) when good/planned is below this")
	fs.DurationVar(&p.maxLagP99, "max-lag-p99", 0, "validity: largest acceptable dispatch-lag p99 (0: default 10ms)")
	fs.Float64Var(&p.rateTol, "rate-tolerance", 0, "validity: accepted relative deviation of achieved from requested rate (0: default 0.10)")
	fs.DurationVar(&p.spin, "spin", 0, "spin-wait the last part of each arrival wait for tighter dispatch (costs CPU)")
	fs.Float64Var(&p.cancelFrac, "cancel-fraction", def.Cancellation.Fraction, "cancellation injection: fraction of requests cancelled after --cancel-after")
	fs.DurationVar(&p.cancelAfter, "cancel-after", def.Cancellation.Delay.D(), "cancellation injection: delay after dispatch")
	fs.StringVar(&p.ttftBoundary, "ttft-boundary", def.TTFTBoundary, "what TTFT measures to: content (first visible content) | any_token (reasoning counts)")
	fs.IntVar(&p.retries, "retries", max(def.Retries.MaxAttempts-1, 0), "retry attempts after a rejection or transport error (0: off); each attempt is its own ledger record")
	fs.DurationVar(&p.backoff, "backoff", def.Retries.Backoff.D(), "failure backoff: wait after a failed request before a closed-loop user's next one, and before a retry; doubles per consecutive failure")
	fs.DurationVar(&p.maxBackoff, "max-backoff", def.Retries.MaxBackoff.D(), "failure backoff cap")
	fs.Float64Var(&p.jitter, "backoff-jitter", def.Retries.Jitter, "fraction of each backoff drawn at random from --seed (reproducible), 0..1")
}

func (p *probeFlags) validate() error {
	if err := p.target.validate(); err != nil {
		return err
	}
	if _, err := schedule.ParseKind(p.arrival); err != nil {
		return badFlag("--arrival: %v", err)
	}
	switch {
	case p.users < 0:
		return badFlag("--closed-loop-users: must be ≥ 0, got %d", p.users)
	case p.users == 0 && !(p.rate > 0):
		return badFlag("--rate: must be > 0, got %v", p.rate)
	case !(p.duration > 0):
		return badFlag("--duration: must be > 0, got %v", p.duration)
	case p.drain < 0:
		return badFlag("--drain: must be ≥ 0, got %v", p.drain)
	case !(p.burstiness > 0):
		return badFlag("--burstiness: must be > 0, got %v", p.burstiness)
	case p.maxInFlight < 0:
		return badFlag("--max-in-flight: must be ≥ 0, got %d", p.maxInFlight)
	case p.maxTokens < 1:
		return badFlag("--max-tokens: must be ≥ 1, got %d", p.maxTokens)
	case p.promptTokens < 1:
		return badFlag("--prompt-tokens: must be ≥ 1, got %d", p.promptTokens)
	case p.sloTTFT < 0 || p.sloTPOT < 0 || p.sloE2E < 0:
		return badFlag("--slo-*: gates must be ≥ 0")
	case p.cancelFrac < 0 || p.cancelFrac > 1:
		return badFlag("--cancel-fraction: must be in [0, 1], got %v", p.cancelFrac)
	case p.retries < 0:
		return badFlag("--retries: must be ≥ 0, got %d", p.retries)
	case !(p.goodTarget > 0 && p.goodTarget <= 1):
		return badFlag("--good-fraction: must be in (0, 1], got %v", p.goodTarget)
	case p.maxLagP99 < 0 || p.spin < 0:
		return badFlag("--max-lag-p99 and --spin: must be ≥ 0")
	case p.rateTol < 0:
		return badFlag("--rate-tolerance: must be ≥ 0, got %v", p.rateTol)
	}
	if err := p.failureBackoff().Validate(); err != nil || p.backoff == 0 || p.maxBackoff == 0 {
		return badFlag("--backoff %v, --max-backoff %v, --backoff-jitter %v: want 0 < backoff ≤ max-backoff and jitter in [0, 1]", p.backoff, p.maxBackoff, p.jitter)
	}
	if _, err := ledger.ParseTTFTBoundary(p.ttftBoundary); err != nil {
		return badFlag("--ttft-boundary: %v", err)
	}
	if _, err := parseThink(p.think); err != nil {
		return badFlag("--think-time %q: %v", p.think, err)
	}
	return nil
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

// failureBackoff is the wait after failures: for closed-loop users and
// between a failed attempt and its retry. Open-loop arrivals never wait.
func (p *probeFlags) failureBackoff() dispatch.Backoff {
	return dispatch.Backoff{Base: p.backoff, Max: p.maxBackoff, Jitter: p.jitter, Seed: p.seed}
}

func (p *probeFlags) gates() stats.Gates {
	return stats.Gates{TTFT: p.sloTTFT, TPOT: p.sloTPOT, E2E: p.sloE2E}
}

// mix is the probe's single workload class: a synthetic prompt of
// --prompt-tokens and --max-tokens of output.
func (p *probeFlags) mix() (*workload.Mix, error) {
	in, err := workload.NewFixed(p.promptTokens)
	if err != nil {
		return nil, badFlag("--prompt-tokens: %v", err)
	}
	out, err := workload.NewFixed(p.maxTokens)
	if err != nil {
		return nil, badFlag("--max-tokens: %v", err)
	}
	return workload.NewMix(p.seed, []workload.Class{{
		Name: "default", Weight: 1, Prompt: workload.Synthetic{}, InputLen: in, OutputLen: out, Gates: p.gates(),
	}})
}

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
	mix, err := p.mix()
	if err != nil {
		return err
	}
	base, stopTarget, err := p.target.startTarget(e)
	if err != nil {
		return err
	}
	defer stopTarget()
	client, target, err := p.target.client(base, log)
	if err != nil {
		return err
	}
	e.std.useClient(client.Redactor())
	defer client.CloseIdleConnections()
	run, err := p.execute(ctx, e, client, target, mix)
	if err != nil {
		return err
	}
	if p.jsonOut {
		err = report.JSON(e.stdout, run.sum)
	} else {
		err = report.Text(e.stdout, run.sum)
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
	return probeExit(run.sum, !p.gates().IsZero(), p.goodTarget, run.lost, run.lostErr)
}

// probeRun is what a probe run left: its summary, and what went wrong with
// its ledger.
type probeRun struct {
	sum       stats.Summary
	ledgerErr error // a broken ledger invariant (a bug: exit 1)
	lost      int   // records missing from the --ledger file
	lostErr   error // why the --ledger file is incomplete
}

// execute runs the probe and returns its summary. The ledger file, when
// asked for, is complete even when the run is interrupted.
func (p *probeFlags) execute(ctx context.Context, e env, client *protocol.Client, target protocol.Target, mix *workload.Mix) (run probeRun, err error) {
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
		v, _ := buildVersion()
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

	boundary, _ := ledger.ParseTTFTBoundary(p.ttftBoundary)
	meta := func(time.Duration) ledger.Meta {
		return ledger.Meta{Traffic: ledger.TrafficProbe, Target: "probe", Class: "default", API: target.Adapter.Name(),
			TTFTBoundary: boundary}
	}
	exec := client.Exec(target, func(*ledger.Record) protocol.Params {
		prm := mix.Next().Params
		prm.Model = p.target.model
		prm.UsageDeltas = p.target.usageDeltas
		return prm
	}, led.Now)
	if p.cancelFrac > 0 {
		var err error
		if exec, err = dispatch.Inject(dispatch.Injection{Fraction: p.cancelFrac, Delay: p.cancelAfter, Seed: p.seed}, exec); err != nil {
			return run, badFlag("--cancel-fraction/--cancel-after: %v", err)
		}
	}
	retry := dispatch.Retry{}
	if p.retries > 0 {
		b := p.failureBackoff()
		retry = dispatch.Retry{MaxAttempts: p.retries + 1, Backoff: b.Base, MaxBackoff: b.Max, Jitter: b.Jitter, Seed: b.Seed}
	}

	// The run's context: the first interrupt stops arrivals (the window ends
	// early) and drains; the drain itself is bounded by --drain.
	start := led.Now()
	var runErr error
	hostReader := hostload.NewReader()
	hostBefore := hostReader.Take()
	if mode == ledger.ModeOpen {
		seq, err := schedule.New(schedule.Spec{Kind: schedule.Kind(p.arrival), Burstiness: p.burstiness, Seed: p.seed},
			schedule.Step{Rate: p.rate, Duration: 0})
		if err != nil {
			return run, badFlag("--rate/--arrival/--burstiness: %v", err)
		}
		runErr = g.Open(ctx, dispatch.OpenConfig{
			Arrivals: seq, Start: start, Window: p.duration, MaxInFlight: p.maxInFlight,
			Meta: meta, Exec: exec, Retry: retry, Spin: p.spin,
		})
	} else {
		think, _ := parseThink(p.think)
		runErr = g.Closed(ctx, dispatch.ClosedConfig{
			Users: p.users, Think: think, Seed: p.seed, Window: p.duration, Meta: meta, Exec: exec, Retry: retry,
			Backoff: p.failureBackoff(),
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
		fmt.Fprintf(e.stderr, "arrival window over; draining up to %v (in flight: %d)\n", p.drain, g.InFlight())
	}
	// A second interrupt during the drain cancels what is still in flight.
	g.Drain(e.hard, p.drain)
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
		Validity: stats.ValidityConfig{MaxLagP99: p.maxLagP99, RateTolerance: p.rateTol},
	})
	for i := range records {
		acc.Add(&records[i])
	}
	acc.SetHost(host)
	run.sum = acc.Summary()
	if window < p.duration {
		run.sum.Validity.Notes = append(run.sum.Validity.Notes, fmt.Sprintf(
			"interrupted: arrivals stopped after %v of the %v window; figures cover the arrivals planned before that",
			window.Round(time.Millisecond), p.duration))
	}
	return run, nil
}
