package wiring

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/hostload"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/servermetrics/scrape"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// ProbeRun is a one-shot probe's shape: what describes a run rather than a
// target (the probe command's flags).
// The open loop's rate is the plan's (baseline.rate, checked with the
// rest of the configuration against limits.max_rate), never the run's.
type ProbeRun struct {
	Window time.Duration // arrivals are planned in [0, Window)
	// Users > 0 runs closed loop instead, each user waiting Think between
	// its requests.
	Users int
	Think schedule.ThinkSpec
	Drain time.Duration // after the window, how long in-flight requests are waited for
	Spin  time.Duration // dispatch.OpenConfig.Spin
	// LedgerPath, when set, is the JSONL ledger file; Version is written
	// in its run header.
	LedgerPath, Version string
	// Hard cancels what is still in flight during the drain (a second
	// interrupt); nil: the drain runs its course.
	Hard context.Context
	// Draining, when set, is told when the arrival window is over and how
	// many requests are then in flight.
	Draining func(inFlight int)
	// Sink, when set, sees every finished record too (the probe command
	// tallies its answer checks with it).
	Sink ledger.Sink
}

// ProbeResult is what a probe run left.
type ProbeResult struct {
	Summary stats.Summary
	// Server is the server's own view of the run (server_metrics), or nil.
	Server *servermetrics.View
	// LedgerErr is a broken ledger invariant (a bug in llmprobe).
	LedgerErr error
	// Lost counts records missing from the ledger file, and LostErr is
	// why it is incomplete (the first write error, or the close's).
	Lost    int
	LostErr error
}

// LedgerFileError is a probe's ledger file that could not be created.
type LedgerFileError struct {
	Path string
	Err  error
}

func (e *LedgerFileError) Error() string { return fmt.Sprintf("ledger file %s: %v", e.Path, e.Err) }
func (e *LedgerFileError) Unwrap() error { return e.Err }

// Probe runs a one-shot probe of the plan's classes (open loop: every
// class, cold twins included, the rate split by weight; closed loop: the
// first class) and summarises it.
// Records stream, as they finish, into the summary's accumulator (bounded:
// counts and percentile sketches) and the ledger file, so memory does not
// grow with the length of the run. The ledger file, when asked for, is
// complete even when the run is interrupted; ctx's end stops the arrivals
// early and the figures then cover the window that ran.
func (p *Plan) Probe(ctx context.Context, r ProbeRun) (res ProbeResult, err error) {
	mode, requested := ledger.ModeOpen, p.Target.Baseline.Rate
	if r.Users > 0 {
		mode, requested = ledger.ModeClosed, 0
	}
	// Open loop sends every class (cold twins included), baseline.rate split by
	// weight, each on arrivals of its own; closed loop the first class.
	var streams []dispatch.OpenConfig
	if mode == ledger.ModeOpen {
		if streams, err = p.probeStreams(requested); err != nil {
			return res, err
		}
	}
	epoch := time.Now()
	// acc is set before the first arrival is planned: no record reaches
	// the sink before it.
	var acc *stats.Accumulator
	sinks := []ledger.Sink{ledger.SinkFunc(func(rec *ledger.Record) { acc.Add(rec) })}
	file, err := r.ledgerFile(epoch, mode)
	if err != nil {
		return res, err
	}
	if file != nil {
		sinks = append(sinks, file)
	}
	if r.Sink != nil {
		sinks = append(sinks, r.Sink)
	}
	led := ledger.New(epoch, sinks...)
	g := dispatch.NewGroup(led)
	api := p.Endpoint.Adapter.Name()
	metaOf := func(class string) func(time.Duration) ledger.Meta {
		return func(time.Duration) ledger.Meta {
			return ledger.Meta{Traffic: ledger.TrafficProbe, Target: "probe", Class: class, API: api, TTFTBoundary: p.Boundary}
		}
	}
	// The server's own view of the run: opened before the first arrival,
	// ended after the drain; never fails the run.
	var srv scrape.Session
	if p.ServerMetrics != nil {
		srv = scrape.Open(ctx, p.ServerMetrics)
	}
	defer srv.Close() // a run that fails before its end scrape abandons the window
	start := led.Now()
	acc = stats.NewAccumulator(stats.Config{
		Mode: mode, RequestedRate: requested, Start: start, Window: r.Window, Gates: p.Target.Classes[0].Gates,
		ClassGates: p.classGates(), Validity: p.Validity, PrefixPairs: PrefixPairs(p.Target),
	})
	hostReader := hostload.NewReader()
	hostBefore := hostReader.Take()
	var runErr error
	if mode == ledger.ModeOpen {
		errs := make(chan error, len(streams))
		for i, oc := range streams {
			oc.Start, oc.Window, oc.Spin = start, r.Window, r.Spin
			oc.Meta, oc.Exec, oc.Session = metaOf(p.Classes[i].Name), p.Exec(i, led.Now), p.Session(i)
			go func() { errs <- g.Open(ctx, oc) }()
		}
		for range streams {
			if err := <-errs; err != nil && runErr == nil {
				runErr = err
			}
		}
	} else {
		runErr = g.Closed(ctx, dispatch.ClosedConfig{
			Users: r.Users, Think: r.Think, Seed: Seed(p.Target), Start: start, Window: r.Window,
			Meta: metaOf(p.Classes[0].Name), Exec: p.Exec(0, led.Now), Retry: p.Retry, Backoff: p.Backoff,
		})
	}
	// The prober host's health over the arrival window (when requests were
	// dispatched) tells a starved prober from a slow target.
	host := hostload.Between(hostBefore, hostReader.Take())
	// An interrupt that ended the arrivals early shortens the window: the
	// cohort is what was planned before it, and rates are judged over the
	// time the schedule actually ran, not the time asked for.
	window := r.Window
	if arrivalsEnd := led.Now() - start; ctx.Err() != nil && arrivalsEnd < window {
		window = max(arrivalsEnd, time.Millisecond)
	}
	hard := r.Hard
	if hard == nil {
		hard = context.Background()
	}
	sessions := false
	for i := range streams {
		sessions = sessions || p.Session(i) != nil
	}
	if sessions && ctx.Err() == nil {
		// The sessions started in the window run their later turns (the
		// drain time bounds the wait); those still thinking after it end
		// unsent/shutdown.
		g.AwaitSessions(hard, r.Drain)
	}
	if r.Draining != nil {
		r.Draining(g.InFlight())
	}
	g.Drain(hard, r.Drain)
	res.Server = srv.End(ctx)
	if err := led.Verify(); err != nil {
		res.LedgerErr = fmt.Errorf("ledger invariant violated: %w", err)
	}
	res.Lost, res.LostErr = closeLedger(file)
	if runErr != nil {
		return res, runErr
	}
	if window < r.Window {
		acc.SetWindow(window)
	}
	acc.SetHost(host)
	res.Summary = acc.Summary()
	res.Summary.WindowAsked = 0 // the probe's report says so in a note
	if window < r.Window {
		res.Summary.Validity.Notes = append(res.Summary.Validity.Notes, fmt.Sprintf(
			"interrupted: arrivals stopped after %s of the %s window; figures cover the arrivals planned before that",
			durfmt.Format(window), durfmt.Format(r.Window)))
	}
	return res, nil
}

// probeStreams is each class's open-loop stream at its share of rate
// (by weight); a target of one class sends it at the whole rate.
func (p *Plan) probeStreams(rate float64) ([]dispatch.OpenConfig, error) {
	shares := workload.Weights(p.Classes).Split(rate)
	out := make([]dispatch.OpenConfig, len(p.Classes))
	for i := range p.Classes {
		seq, err := Arrivals(p.Target, i, shares[i])
		if err != nil {
			return nil, fmt.Errorf("arrivals: %w", err)
		}
		out[i] = dispatch.OpenConfig{Arrivals: seq, MaxInFlight: p.Target.MaxInFlight, Retry: p.Retry}
	}
	return out, nil
}

// classGates are the gates of every class by name (cold twins included).
func (p *Plan) classGates() map[string]stats.Gates {
	m := make(map[string]stats.Gates, len(p.Classes))
	for _, c := range p.Classes {
		m[c.Name] = c.Gates
	}
	return m
}

// ledgerFile creates the run's JSONL ledger file (its header written), or
// returns nil when none is asked for.
func (r ProbeRun) ledgerFile(epoch time.Time, mode ledger.Mode) (*ledger.FileSink, error) {
	if r.LedgerPath == "" {
		return nil, nil
	}
	f, err := ledger.CreateFileSink(r.LedgerPath, ledger.RunHeader{
		Kind: "run", RunID: fmt.Sprintf("probe-%d", epoch.UnixNano()), Epoch: epoch,
		EpochUnixNano: epoch.UnixNano(), Mode: mode, Version: r.Version, Schema: ledger.SchemaVersion,
	})
	if err != nil {
		return nil, &LedgerFileError{Path: r.LedgerPath, Err: err}
	}
	return f, nil
}

// closeLedger closes the ledger file (when there is one) and returns how
// many records it lost and why: a ledger that could not be written is a
// failed run (the report is still printed, and the error names the OS
// error).
func closeLedger(file *ledger.FileSink) (int, error) {
	if file == nil {
		return 0, nil
	}
	closeErr := file.Close() // every write error seen, or nil
	n, err := file.Err()
	if closeErr != nil {
		err = closeErr
	}
	if n > 0 || err != nil {
		return n, err
	}
	return 0, nil
}

// LadderRun is what a one-shot ladder adds to its plan.
type LadderRun struct {
	Name     string                // the target's name in reports and the history
	Spin     time.Duration         // ladder.Config.Spin
	Progress func(ladder.Progress) // told at each phase of each step
	Trigger  string                // why it runs (the history's trigger)
	Hard     context.Context       // cancels what is still in flight after the ladder (nil: waits)
}

// LadderConfigError is a ladder the runner refused before it started.
type LadderConfigError struct{ Err error }

func (e *LadderConfigError) Error() string { return e.Err.Error() }
func (e *LadderConfigError) Unwrap() error { return e.Err }

// RunLadder runs the plan's ladder once in a group and a ledger of its
// own, and drains what is still in flight. The result is returned with the
// error (an interrupted ladder, a history not written).
func (p *Plan) RunLadder(ctx context.Context, r LadderRun) (ladder.Result, error) {
	if !p.HasLadder {
		return ladder.Result{}, fmt.Errorf("target %s: no ladder planned", p.Target.Name)
	}
	lc := p.Ladder
	lc.Target, lc.Spin, lc.Progress = r.Name, r.Spin, r.Progress
	// The one-shot ladder's identity is the model its answers name (no
	// version source is polled): a ladder answered by another model than
	// the one it began with is cut, as the daemon's is by a deploy.
	var seen servedModel
	if lc.Identity == nil {
		lc.Identity = seen.identity
	}
	var runner *ladder.Runner
	led := ledger.New(time.Now(), ledger.SinkFunc(func(rec *ledger.Record) {
		seen.note(rec.Model)
		runner.Record(rec)
	}))
	g := dispatch.NewGroup(led)
	runner, err := ladder.New(lc, g, p.LadderExec(led.Now))
	if err != nil {
		return ladder.Result{}, &LadderConfigError{err}
	}
	res, runErr := runner.Run(ctx, r.Trigger)
	hard := r.Hard
	if hard == nil {
		hard = context.Background()
	}
	g.Drain(hard, 0)
	return res, runErr
}

// servedModel is the model the target's answers last named (cleaned by
// the protocol adapter), safe for concurrent use.
type servedModel struct {
	mu    sync.Mutex
	model string
}

func (m *servedModel) note(model string) {
	if model == "" {
		return
	}
	m.mu.Lock()
	m.model = model
	m.mu.Unlock()
}

func (m *servedModel) identity() ladderresult.Identity {
	m.mu.Lock()
	defer m.mu.Unlock()
	return ladderresult.Identity{Model: m.model}
}
