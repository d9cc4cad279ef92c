package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/schedule"
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
	checksPath string // --checks: a configuration file whose canary classes' checks the probe sends
}

func (p *probeFlags) register(fs *pflag.FlagSet) {
	t := &p.target
	t.register(fs, config.OneShot())
	fs.Float64Var(&p.rate, "rate", 5, "open loop: arrival rate, requests per second (baseline.rate: at most --max-rate)")
	fs.DurationVar(&p.duration, "duration", 10*time.Second, "arrival window: arrivals are planned in [0, duration)")
	t.bind(fs,
		keyFlag{"max-rate", "limits.max_rate", "hard maximum arrival rate, req/s: a --rate above it is refused (at most 10000)"},
		keyFlag{"arrival", "baseline.arrival", "arrival process: poisson|constant|gamma"},
		keyFlag{"burstiness", "baseline.burstiness", "gamma shape k (CV = 1/sqrt(k)); 1 = Poisson, <1 burstier"},
		keyFlag{"max-in-flight", "max_in_flight", "in-flight cap; arrivals that find it full are recorded unsent/client_cap (0: none)"},
	)
	fs.DurationVar(&p.drain, "drain", config.Defaults().Drain.Timeout.D(), "after the window, wait this long for in-flight requests; the rest are censored")
	t.bind(fs,
		keyFlag{"max-tokens", "classes[0].output.value", "max_tokens sent with each request"},
		keyFlag{"prompt-tokens", "classes[0].input.value", "length of the synthetic prompt, in tokens (≈4 characters each); with --prefix-tokens, of the unique suffix"},
		keyFlag{"prefix-tokens", "classes[0].prefix.tokens", "a shared prefix of this many tokens before each prompt, and a cold twin class <class>-cold of identical lengths sent beside it; the report gives the prefix-cache speedup (0: none)"},
		keyFlag{"prefix-groups", "classes[0].prefix.groups", "with --prefix-tokens: distinct shared prefixes (0: 1)"},
		keyFlag{"prefix-choice", "classes[0].prefix.choice", "with --prefix-tokens: how a request picks its prefix: round_robin|uniform|zipf (empty: round_robin)"},
		keyFlag{"cold-twin-weight", "classes[0].cold_twin.weight", "with --prefix-tokens: the cold twin's weight against the class's 1 (its share of --rate; 0: 1)"},
	)
	fs.IntVar(&p.users, "closed-loop-users", 0, "run CLOSED LOOP with N users instead of the open-loop schedule (for comparison)")
	fs.StringVar(&p.think, "think-time", "constant:0s", "closed loop think time: D (constant) | constant:D | exponential:MEAN | lognormal:MEAN:SIGMA")
	t.bind(fs,
		keyFlag{"session-turns", "classes[0].session.turns", "multi-turn sessions: each arrival starts a conversation of N turns (2..32; 0: independent requests), each re-sending the history"},
		keyFlag{"session-think", "classes[0].session.think", "sessions: think time before each later turn (the --think-time syntax)"},
	)
	fs.StringVar(&p.ledgerPath, "ledger", "", "write the request ledger as JSONL to this file")
	fs.BoolVar(&p.jsonOut, "json", false, "print the report as one JSON object")
	fs.StringVar(&p.htmlPath, "html", "", "also write a self-contained HTML report (header with version, command, target, model, API, window, arrivals, seed, gates and host evidence; outcomes; the answer checks with --checks; latency percentiles)")
	t.registerSeed(fs, "seed for arrivals, think times and prompts (0: derived from the target name); not given: drawn for each run, so that a repeated run's prompts are not answered from the server's prompt cache (the report and stderr say the seed drawn)")
	t.drawSeed = true
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
	fs.StringVar(&p.checksPath, "checks", "", "answer checks: send the checks of this configuration file's canary classes (classes[].checks, e.g. config/checks.yaml) in rotation instead of prompts; a checks table follows the report, and a judged check that failed exits 8")
	t.bind(fs, keyFlag{"record-answers", "classes[0].record_answers", "with --checks: what a check's --ledger record keeps of the answer beside its hash: none | excerpt (its first 256 bytes, sanitised)"})
	t.keys["classes[0].checks"] = "--checks"
	t.keys["classes[0].input"] = "--prompt-tokens"
	t.keys["classes[0].output"] = "--max-tokens"
	t.keys["baseline.rate"] = "--rate"
}

func (p *probeFlags) validate() error {
	switch {
	case p.users < 0:
		return badFlag("--closed-loop-users: must be ≥ 0, got %d", p.users)
	case !(p.duration > 0):
		return badFlag("--duration: must be > 0, got %v", p.duration)
	case p.drain < 0:
		return badFlag("--drain: must be ≥ 0, got %v", p.drain)
	case p.spin < 0:
		return badFlag("--spin: must be ≥ 0, got %v", p.spin)
	}
	if _, err := schedule.ParseThink(p.think); err != nil {
		return badFlag("--think-time %q: %v", p.think, err)
	}
	// The open loop's rate is the target's baseline.rate: checked by the
	// configuration's rules (limits.max_rate) and sent by the plan from
	// there, as the daemon's baseline is. A closed loop sends no rate.
	if p.users == 0 || p.rate > 0 {
		p.target.target().Baseline.Rate = p.rate
	}
	if p.checksPath != "" {
		checks, err := loadChecks(p.checksPath)
		if err != nil {
			return err
		}
		p.target.target().Classes[0].Checks = checks
	}
	return p.target.validate()
}

// gates are the probe's class gates (--slo-*).
func (p *probeFlags) gates() stats.Gates { return p.target.target().Classes[0].Gates }

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
	if p.target.seedDrawn {
		fmt.Fprintf(e.stderr, "seed %d, drawn for this run (new prompts: a server's prompt cache cannot answer them from an earlier run); --seed %d repeats it\n", p.target.seed, p.target.seed)
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	base, stopTarget, err := p.target.startTarget(e)
	if err != nil {
		return err
	}
	defer stopTarget()
	plan, err := p.target.plan(base, log, false)
	if err != nil {
		return err
	}
	e.std.useClient(plan.Client.Redactor())
	defer plan.Close()
	started := time.Now()
	think, _ := schedule.ParseThink(p.think) // checked by validate
	var tally *checkTally
	var sink ledger.Sink
	if checks := p.target.target().Classes[0].Checks; len(checks) > 0 {
		tally = newCheckTally(checks)
		sink = tally
	}
	run, err := plan.Probe(ctx, wiring.ProbeRun{
		Window: p.duration, Users: p.users, Think: think, Drain: p.drain, Spin: p.spin,
		LedgerPath: p.ledgerPath, Version: currentBuild().Version, Hard: e.hard, Sink: sink,
		Draining: func(inFlight int) {
			if !p.jsonOut {
				fmt.Fprintf(e.stderr, "arrival window over; draining up to %s (in flight: %d)\n", durfmt.Format(p.drain), inFlight)
			}
		},
	})
	// The report is printed either way; a broken ledger invariant is a bug
	// in llmprobe and fails the run, and a ledger file that could not be
	// written is a failed run (exit 7).
	if run.LedgerErr != nil {
		fmt.Fprintf(e.stderr, "LEDGER INVARIANT VIOLATED: %v\n", errors.Unwrap(run.LedgerErr))
	}
	if run.Lost > 0 || run.LostErr != nil {
		run.LostErr = fmt.Errorf("--ledger %s: %d records not written: %w", p.ledgerPath, run.Lost, run.LostErr)
		fmt.Fprintf(e.stderr, "ledger file: %v\n", run.LostErr)
	}
	if lf := (*wiring.LedgerFileError)(nil); errors.As(err, &lf) {
		return fmt.Errorf("--ledger: %w", lf.Err)
	} else if err != nil {
		return err
	}
	// The exit status is decided once, and every report leads with it.
	gated, goodTarget := !p.gates().IsZero(), p.target.target().Ladder.GoodFractionTarget
	status := probeExit(run.Summary, gated, goodTarget, run.Lost, run.LostErr)
	var checkRows []checkRow
	if tally != nil {
		checkRows = tally.Rows()
		status = checksExit(status, checkRows)
	}
	if run.LedgerErr != nil { // a broken ledger invariant is a bug in llmprobe and fails the run
		status = run.LedgerErr
	}
	pass := probePass(gated, run.Summary.GoodFraction, goodTarget)
	if tally != nil {
		pass += "; " + checksPass(checkRows)
	}
	verdict := runVerdict(status, pass)
	if verdict.Wrong = report.FailedChecksText(checkRows); verdict.Wrong != "" && verdict.Exit == exitWrongAnswers {
		verdict.Why = "" // the wrong answers, named first, decided it
	}
	m := reportMeta(&p.target, base, "probe", args, plan.Client.Redactor(), plan.Endpoint.Adapter.Name(), p.duration, "window")
	m.Verdict, m.Path, m.Checks = &verdict, requestPath(plan.Endpoint), checkRows
	if p.htmlPath != "" {
		m.Started, m.Seed, m.SeedSet = started, wiring.Seed(*p.target.target()), true
		m.Arrival = arrivalName(string(p.target.target().Baseline.Arrival), p.target.target().Baseline.Burstiness)
		if p.users > 0 {
			m.Arrival = fmt.Sprintf("closed loop, %d users, think time %s", p.users, p.think)
		}
		if err := writeFile(p.htmlPath, func(f *os.File) error { return report.ProbeHTMLWith(f, run.Summary, run.Server, m) }); err != nil {
			return err
		}
	}
	if p.jsonOut {
		pj := report.ProbeOf(run.Summary)
		pj.AddServer(run.Server, run.Summary)
		pj.AddMeta(m)
		err = report.ProbeJSON(e.stdout, pj)
	} else {
		err = report.ProbeText(e.stdout, run.Summary, run.Server, m)
	}
	if err != nil {
		return err
	}
	return status
}
