package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"log/slog"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/stats"
)

func runLadder(ctx context.Context, e env, args []string) error {
	var t targetFlags
	fs := newFlagSet("ladder", e)
	t.register(fs)
	def := config.OneShotLadder()
	class, l := def.Classes[0], def.Ladder
	steps := fs.String("steps", formatRates(l.Steps), "offered rates of the steps, req/s, comma-separated, increasing")
	stepDur := fs.Duration("step-duration", l.StepDuration.D(), "arrival window of each step")
	gap := fs.Duration("gap", l.Gap.D(), "pause between steps (after the previous step settled)")
	maxRate := fs.Float64("max-rate", config.Defaults().Limits.MaxRate, "hard maximum: a step above it is refused")
	arrival := fs.String("arrival", l.Arrival, "arrival process: poisson|constant|gamma")
	seed := fs.Uint64("seed", uint64(l.Seed), "seed for arrivals and prompts")
	maxInFlight := fs.Int("max-in-flight", def.MaxInFlight, "in-flight cap per step (0: none); arrivals that find it full are unsent/client_cap")
	maxTokens := fs.Int("max-tokens", class.Output.Value, "max_tokens sent with each request")
	promptTokens := fs.Int("prompt-tokens", class.Input.Value, "synthetic prompt length, in tokens")
	sloTTFT := fs.Duration("slo-ttft", class.Gates.TTFT.D(), "gate: TTFT (from planned send)")
	sloE2E := fs.Duration("slo-e2e", class.Gates.E2E.D(), "gate: end-to-end latency (0: none)")
	goodTarget := fs.Float64("good-fraction", l.GoodFractionTarget, "a step meets its gates when good/planned ≥ this")
	kneeFactor := fs.Float64("knee-factor", l.KneeFactor, "knee = first step whose TTFT p95 exceeds this × the lowest step's")
	abortErr := fs.Float64("abort-error-fraction", l.Abort.ErrorFraction, "abort when failed/sent exceeds this (0: off)")
	abortRej := fs.Float64("abort-rejection-fraction", l.Abort.RejectionFraction, "abort when rejected/sent exceeds this (0: off)")
	abortTTFT := fs.Float64("abort-ttft-gate-multiple", l.Abort.TTFTGateMultiple, "abort when TTFT p95 exceeds this × --slo-ttft (0: off); checked inside each step too")
	stopAt := fs.String("stop-at", l.StopAt, "where to stop climbing: knee|capacity|top (never more than one step past the first failing step)")
	onInvalid := fs.String("on-invalid", "abort", "what a generator-invalid step does: abort (stop the ladder there) | continue (record it, never use it, run the next step)")
	maxLagP99 := fs.Duration("max-lag-p99", 0, "validity: largest acceptable dispatch-lag p99 per step (0: default 10ms)")
	rateTol := fs.Float64("rate-tolerance", 0, "validity: accepted relative deviation of achieved from requested rate (0: default 0.10)")
	spin := fs.Duration("spin", 0, "spin-wait the last part of each arrival wait for tighter dispatch (costs CPU)")
	name := fs.String("name", "", "target name in the reports and the history (default: the URL's host and path, or the built-in simulator)")
	history := fs.String("history", "", "append the result to this JSONL history file")
	svgPath := fs.String("svg", "", "write the curve (TTFT p95 and goodput against offered rate) as SVG")
	htmlPath := fs.String("html", "", "write a self-contained HTML report")
	jsonOut := fs.Bool("json", false, "print the result as JSON instead of the step table")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := t.validate(); err != nil {
		return err
	}
	rates, err := parseRates(*steps)
	if err != nil {
		return badFlag("--steps %q: %v", *steps, err)
	}
	kind, err := schedule.ParseKind(*arrival)
	if err != nil {
		return badFlag("--arrival: %v", err)
	}
	stop, err := ladder.ParseStopAt(*stopAt)
	if err != nil {
		return badFlag("--stop-at: %v", err)
	}
	abortInvalid := true
	switch *onInvalid {
	case "abort":
	case "continue":
		abortInvalid = false
	default:
		return badFlag("--on-invalid %q: want abort or continue", *onInvalid)
	}
	if *maxLagP99 < 0 || *spin < 0 || *rateTol < 0 {
		return badFlag("--max-lag-p99, --spin and --rate-tolerance must be ≥ 0")
	}
	pf := probeFlags{target: t, maxTokens: *maxTokens, promptTokens: *promptTokens, seed: *seed, sloTTFT: *sloTTFT, sloE2E: *sloE2E}
	mix, err := pf.mix()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	base, stopTarget, err := t.startTarget(e)
	if err != nil {
		return err
	}
	defer stopTarget()
	client, target, err := t.client(base, log)
	if err != nil {
		return err
	}
	e.std.useClient(client.Redactor())
	defer client.CloseIdleConnections()

	var runner *ladder.Runner
	led := ledger.New(time.Now(), ledger.SinkFunc(func(r *ledger.Record) { runner.Record(r) }))
	g := dispatch.NewGroup(led)
	params := func(*ledger.Record) protocol.Params {
		p := mix.Next().Params
		p.Model = t.model
		return p
	}
	exec := func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		tg := target
		if mark := ladder.FirstTokenFunc(ctx); mark != nil {
			tg.Adapter = protocol.ObserveFirstToken(tg.Adapter, false, mark)
		}
		return client.Do(ctx, tg, params(rec), rec, led.Now, dispatched)
	}
	gates := stats.Gates{TTFT: *sloTTFT, E2E: *sloE2E}
	targetName := *name
	if targetName == "" {
		targetName = t.displayName(base)
	}
	runner, err = ladder.New(ladder.Config{
		Target: targetName, API: t.api, Classes: []ladder.Class{{Name: "default", Weight: 1, Gates: gates}},
		Steps: rates, StepDuration: *stepDur, Gap: *gap, MaxRate: *maxRate, Arrival: kind, Seed: *seed,
		MaxInFlight: *maxInFlight, Spin: *spin,
		Abort: ladder.AbortRules{ErrorFraction: *abortErr, RejectionFraction: *abortRej, TTFTGateMultiple: *abortTTFT,
			OnUnsent: *maxInFlight > 0 && abortInvalid, OnGeneratorInvalid: abortInvalid},
		Validity:           stats.ValidityConfig{MaxLagP99: *maxLagP99, RateTolerance: *rateTol},
		GoodFractionTarget: *goodTarget, KneeFactor: *kneeFactor, Settle: t.total, HistoryFile: *history,
		StopAt: stop, ExecMarksFirstToken: true,
		Progress: func(p ladder.Progress) {
			if p.Phase == "done" {
				fmt.Fprintf(e.stderr, "\rstep %d/%d  %7.2f req/s  done%-40s\n", p.Step, p.Steps, p.Rate, "")
				if p.Row != nil && !p.Row.Valid {
					fmt.Fprintf(e.stderr, "step %d generator invalid (%s): not used for capacity or knee\n", p.Step, strings.Join(p.Row.CauseNames(), ", "))
				}
				return
			}
			fmt.Fprintf(e.stderr, "\rstep %d/%d  %7.2f req/s  %-8s %5.1fs  planned %d  finished %d   ",
				p.Step, p.Steps, p.Rate, p.Phase, p.Elapsed.Seconds(), p.Planned, p.Finished)
		},
	}, g, exec)
	if err != nil {
		return badFlag("%v", err)
	}
	res, runErr := runner.Run(ctx, "manual")
	g.Drain(e.hard, 0)
	var historyErr error
	if errors.Is(runErr, ladder.ErrHistoryNotWritten) {
		historyErr = runErr
	} else if runErr != nil && ctx.Err() == nil {
		return runErr
	}
	lr := res.Stats()
	for _, out := range []struct {
		path   string
		render func(*os.File) error
	}{
		{*svgPath, func(f *os.File) error { return report.LadderSVG(f, lr) }},
		{*htmlPath, func(f *os.File) error { return report.LadderHTML(f, lr) }},
	} {
		if out.path == "" {
			continue
		}
		if err := writeFile(out.path, out.render); err != nil {
			return err
		}
	}
	if *jsonOut {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report.LadderOf(lr)); err != nil {
			return err
		}
	} else if err := report.LadderText(e.stdout, lr); err != nil {
		return err
	}
	return ladderExit(res, historyErr)
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

func parseRates(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) {
			return nil, fmt.Errorf("%q is not a rate above 0", f)
		}
		if n := len(out); n > 0 && v <= out[n-1] {
			return nil, fmt.Errorf("rates must increase (%g after %g)", v, out[n-1])
		}
		out = append(out, v)
	}
	return out, nil
}
