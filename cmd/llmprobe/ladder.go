package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/logging"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// ladderFlags are the ladder command's flags: the target's (each a key of
// a config.Target) and the run's name, spin and outputs.
type ladderFlags struct {
	t                       targetFlags
	name, svgPath, htmlPath *string
	spin                    *time.Duration
	jsonOut                 *bool
}

// parseLadderFlags parses and checks the ladder command's flags.
func parseLadderFlags(e env, args []string) (*ladderFlags, error) {
	l := &ladderFlags{}
	t := &l.t
	fs := newFlagSet("ladder", e)
	t.register(fs, config.OneShotLadder())
	tg := t.target()
	steps := fs.String("steps", formatRates(tg.Ladder.Steps), "offered rates of the steps, req/s, comma-separated, increasing")
	t.bind(fs,
		keyFlag{"step-duration", "ladder.step_duration", "arrival window of each step (at least 1s)"},
		keyFlag{"gap", "ladder.gap", "pause between steps (after the previous step settled)"},
		keyFlag{"max-rate", "ladder.max_rate", "hard maximum: a step above it is refused (at most 10000)"},
		keyFlag{"arrival", "ladder.arrival", "arrival process: poisson|constant|gamma"},
		keyFlag{"burstiness", "ladder.burstiness", "gamma shape k (CV = 1/sqrt(k)); 1 = Poisson, <1 burstier"},
	)
	t.registerSeed(fs, "seed for arrivals and prompts (0: derived from the target name)")
	t.bind(fs,
		keyFlag{"max-in-flight", "max_in_flight", "in-flight cap per step (0: none); arrivals that find it full are unsent/client_cap"},
		keyFlag{"max-tokens", "classes[0].output.value", "max_tokens sent with each request"},
		keyFlag{"prompt-tokens", "classes[0].input.value", "synthetic prompt length, in tokens"},
		keyFlag{"slo-ttft", "classes[0].gates.ttft", "gate: TTFT (from planned send)"},
		keyFlag{"slo-e2e", "classes[0].gates.e2e", "gate: end-to-end latency (0: none)"},
		keyFlag{"good-fraction", "ladder.good_fraction_target", "a step meets its gates when good/planned ≥ this"},
		keyFlag{"knee-factor", "ladder.knee_factor", "knee = first step whose TTFT p95 exceeds this × the lowest step's"},
		keyFlag{"abort-error-fraction", "ladder.abort.error_fraction", "abort when failed/sent exceeds this (0: off)"},
		keyFlag{"abort-rejection-fraction", "ladder.abort.rejection_fraction", "abort when rejected/sent exceeds this (0: off)"},
		keyFlag{"abort-ttft-gate-multiple", "ladder.abort.ttft_gate_multiple", "abort when TTFT p95 exceeds this × --slo-ttft (0: off); checked inside each step too"},
		keyFlag{"stop-at", "ladder.stop_at", "where to stop climbing: knee|capacity|top (never more than one step past the first failing step)"},
	)
	onInvalid := fs.String("on-invalid", "abort", "what a generator-invalid step does: abort (stop the ladder there) | continue (record it, never use it, run the next step)")
	t.bind(fs,
		keyFlag{"max-lag-p99", "ladder.max_lag_p99", "validity: largest acceptable dispatch-lag p99 per step"},
		keyFlag{"rate-tolerance", "ladder.rate_tolerance", "validity: accepted relative deviation of achieved from requested rate"},
	)
	spin := fs.Duration("spin", 0, "spin-wait the last part of each arrival wait for tighter dispatch (costs CPU)")
	name := fs.String("name", "", "target name in the reports and the history (default: the URL's host and path, or the built-in simulator)")
	t.bind(fs, keyFlag{"history", "ladder.history_file", "append the result to this JSONL history file"})
	svgPath := fs.String("svg", "", "write the curve (TTFT p95 on a log axis with the gate, and goodput, against offered rate) as SVG")
	htmlPath := fs.String("html", "", "write a self-contained HTML report (a header with the version, command, target, model, API, step duration, arrivals, seed, gates and host evidence; the chart; the step table)")
	jsonOut := fs.Bool("json", false, "print the result as JSON instead of the step table")
	t.keys["classes[0].input"] = "--prompt-tokens"
	t.keys["classes[0].output"] = "--max-tokens"
	t.keys["ladder.steps"] = "--steps"
	t.keys["limits.max_rate"] = "--max-rate"
	t.keys["ladder.abort.on_generator_invalid"] = "--on-invalid"
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	rates, err := parseRates(*steps)
	if err != nil {
		return nil, badFlag("--steps %q: %v", *steps, err)
	}
	tg.Ladder.Steps = rates
	// --max-rate is the run's hard maximum: the ladder's and the limit's.
	t.cfg.Limits.MaxRate = tg.Ladder.MaxRate
	switch *onInvalid {
	case "abort":
		tg.Ladder.Abort.OnGeneratorInvalid = true
	case "continue":
		tg.Ladder.Abort.OnGeneratorInvalid = false
	default:
		return nil, badFlag("--on-invalid %q: want abort or continue", *onInvalid)
	}
	// With an in-flight cap, an unsent request is a generator problem too.
	tg.Ladder.Abort.OnUnsent = tg.MaxInFlight > 0 && tg.Ladder.Abort.OnGeneratorInvalid
	if *spin < 0 {
		return nil, badFlag("--spin: must be ≥ 0")
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	l.name, l.svgPath, l.htmlPath, l.spin, l.jsonOut = name, svgPath, htmlPath, spin, jsonOut
	return l, nil
}

func runLadder(ctx context.Context, e env, args []string) error {
	l, err := parseLadderFlags(e, args)
	if err != nil {
		return err
	}
	t, name, spin, svgPath, htmlPath, jsonOut := &l.t, l.name, l.spin, l.svgPath, l.htmlPath, l.jsonOut
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	base, stopTarget, err := t.startTarget(e)
	if err != nil {
		return err
	}
	defer stopTarget()
	plan, err := t.plan(base, log, true)
	if err != nil {
		return err
	}
	e.std.useClient(plan.Client.Redactor())
	defer plan.Close()
	lc := plan.Ladder
	if *name == "" {
		*name = t.displayName(base)
	}
	res, runErr := plan.RunLadder(ctx, wiring.LadderRun{Name: *name, Spin: *spin, Trigger: "manual", Hard: e.hard,
		Progress: ladderProgress(e)})
	var historyErr error
	if lc := (*wiring.LadderConfigError)(nil); errors.As(runErr, &lc) {
		return badFlag("%v", lc.Err)
	} else if errors.Is(runErr, ladder.ErrHistoryNotWritten) {
		historyErr = runErr
	} else if runErr != nil && ctx.Err() == nil {
		return runErr
	}
	// The exit status is decided once, and every report leads with it.
	status := ladderExit(res, historyErr)
	verdict := runVerdict(status, ladderPass(res))
	meta := reportMeta(t, base, "ladder", args, plan.Client.Redactor(), plan.Endpoint.Adapter.Name(), lc.StepDuration, "step duration")
	meta.Arrival, meta.Seed, meta.SeedSet = arrivalName(string(lc.Arrival), lc.Burstiness), lc.Seed, true
	meta.Verdict, meta.Path = &verdict, requestPath(plan.Endpoint)
	for _, out := range []struct {
		path   string
		render func(*os.File) error
	}{
		{*svgPath, func(f *os.File) error { return report.LadderSVGMeta(f, res, meta) }},
		{*htmlPath, func(f *os.File) error { return report.LadderHTML(f, res, meta) }},
	} {
		if out.path == "" {
			continue
		}
		if err := writeFile(out.path, out.render); err != nil {
			return err
		}
	}
	if *jsonOut {
		if err := report.LadderJSON(e.stdout, res, &verdict); err != nil {
			return err
		}
	} else if err := report.VerdictText(e.stdout, &verdict); err != nil {
		return err
	} else if err := report.LadderText(e.stdout, res); err != nil {
		return err
	}
	return status
}

// ladderProgress prints each step's progress on one line of stderr,
// rewritten in place on a terminal; elsewhere (a file, a pipe, a CI log)
// only each step's end, one plain line each.
func ladderProgress(e env) func(ladder.Progress) {
	tty := logging.IsTerminal(e.stderr)
	return func(p ladder.Progress) {
		if p.Phase == "done" {
			if tty {
				fmt.Fprintf(e.stderr, "\rstep %d/%d  %7.2f req/s  done%-40s\n", p.Step, p.Steps, p.Rate, "")
			} else {
				fmt.Fprintf(e.stderr, "step %d/%d  %7.2f req/s  done  planned %d  finished %d\n", p.Step, p.Steps, p.Rate, p.Planned, p.Finished)
			}
			if p.Row != nil && !p.Row.Summary.Validity.Valid {
				fmt.Fprintf(e.stderr, "step %d generator invalid (%s): not used for capacity or knee\n", p.Step, strings.Join(p.Row.Summary.Validity.CauseNames(), ", "))
			}
			return
		}
		if tty {
			fmt.Fprintf(e.stderr, "\rstep %d/%d  %7.2f req/s  %-8s %5.1fs  planned %d  finished %d   ",
				p.Step, p.Steps, p.Rate, p.Phase, p.Elapsed.Seconds(), p.Planned, p.Finished)
		}
	}
}

func writeFile(path string, render func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := render(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// formatRates writes rates as --steps takes them.
func formatRates(rates []float64) string {
	parts := make([]string, len(rates))
	for i, r := range rates {
		parts[i] = strconv.FormatFloat(r, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

// parseRates reads --steps' numbers; what a step rate may be (above 0,
// increasing, within the hard maximum) is the configuration's rule
// (ladder.steps), checked with the rest of it.
func parseRates(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		out = append(out, v)
	}
	return out, nil
}
