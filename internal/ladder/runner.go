package ladder

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/hostload"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/servermetrics/scrape"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// ErrRunning is returned when a ladder is started while one is running.
var ErrRunning = errors.New("ladder: a ladder is already running for this target")

// ErrHistoryNotWritten is wrapped by Run's error when the result could not
// be appended to the history file.
var ErrHistoryNotWritten = errors.New("ladder history not written")

// Runner runs one target's ladders through a dispatch.Group. It is the
// ledger.Sink the group's ledger must feed (it keeps only this target's
// ladder records).
type Runner struct {
	cfg  Config
	g    *dispatch.Group
	exec dispatch.Exec

	running sync.Mutex // held for the duration of Run

	mu  sync.Mutex // guards cur
	cur *stepState

	// ident is the identity the running ladder (or session) began on;
	// set under running.
	ident ladderresult.Identity
}

// New checks cfg and returns a runner. It refuses steps above MaxRate.
func New(cfg Config, g *dispatch.Group, exec dispatch.Exec) (*Runner, error) {
	var errs []error
	if g == nil || exec == nil {
		errs = append(errs, errors.New("ladder: a dispatch group and an executor are required"))
	}
	if len(cfg.Steps) == 0 {
		errs = append(errs, errors.New("ladder: no steps"))
	}
	for i, r := range cfg.Steps {
		if !(r > 0) {
			errs = append(errs, fmt.Errorf("ladder: step %d: rate %g must be above 0", i+1, r))
		}
		if cfg.MaxRate > 0 && r > cfg.MaxRate {
			errs = append(errs, fmt.Errorf("ladder: step %d: rate %g is above the hard maximum %g", i+1, r, cfg.MaxRate))
		}
	}
	if cfg.MaxRate <= 0 {
		errs = append(errs, errors.New("ladder: a hard maximum rate (MaxRate) is required"))
	}
	if cfg.StepDuration <= 0 {
		errs = append(errs, errors.New("ladder: step duration must be above 0"))
	}
	if !(cfg.GoodFractionTarget > 0 && cfg.GoodFractionTarget <= 1) {
		errs = append(errs, fmt.Errorf("ladder: good fraction target %g must be in (0, 1]", cfg.GoodFractionTarget))
	}
	if !(cfg.KneeFactor > 1) {
		errs = append(errs, fmt.Errorf("ladder: knee factor %g must be above 1", cfg.KneeFactor))
	}
	if !cfg.Arrival.Valid() {
		errs = append(errs, fmt.Errorf("ladder: unknown arrival process %q (want poisson, constant or gamma)", cfg.Arrival))
	}
	if !cfg.StopAt.Valid() {
		errs = append(errs, fmt.Errorf("ladder: unknown stop_at %q (want knee, capacity or top)", cfg.StopAt))
	}
	if !cfg.TTFTBoundary.Valid() {
		errs = append(errs, fmt.Errorf("ladder: unknown TTFT boundary %q (want content or any_token)", cfg.TTFTBoundary))
	}
	for _, c := range cfg.Classes {
		if c.Name == "" || !(c.Weight > 0) {
			errs = append(errs, fmt.Errorf("ladder: class %q needs a name and a weight above 0", c.Name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(cfg.Classes) == 0 {
		cfg.Classes = []Class{{Name: "default", Weight: 1}}
	}
	if cfg.StopAt == "" {
		cfg.StopAt = StopAtCapacity
	}
	if cfg.Settle <= 0 {
		cfg.Settle = 30 * time.Second
	}
	if cfg.MidStepMin == 0 {
		cfg.MidStepMin = 20
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Host == nil {
		cfg.Host = hostload.NewReader()
	}
	if cfg.TTFTGate == 0 {
		for _, c := range cfg.Classes {
			if g := c.Gates.TTFT; g > 0 && (cfg.TTFTGate == 0 || g < cfg.TTFTGate) {
				cfg.TTFTGate = g
			}
		}
	}
	return &Runner{cfg: cfg, g: g, exec: exec}, nil
}

func (r *Runner) progress(p Progress) {
	if r.cfg.Progress != nil {
		p.Target, p.Steps = r.cfg.Target, len(r.cfg.Steps)
		r.cfg.Progress(p)
	}
}

// Run executes the ladder once: each step in turn, abort rules after every
// step (and during it once MidStepMin requests finished), then capacity and
// knee. The result is appended to the history file (when configured) even
// when the ladder aborted or ctx was cancelled; a cancelled ladder is
// aborted with reason "interrupted" and Run also returns ctx's error.
func (r *Runner) Run(ctx context.Context, trigger string) (Result, error) {
	if !r.running.TryLock() {
		return Result{}, ErrRunning
	}
	defer r.running.Unlock()
	cfg := r.cfg
	r.ident = r.identityNow()
	res := Result{
		Target: cfg.Target, Trigger: trigger, Started: cfg.Now(), StopAt: string(cfg.StopAt), Identity: r.ident,
		StepDuration: cfg.StepDuration, GoodFractionTarget: cfg.GoodFractionTarget, KneeFactor: cfg.KneeFactor,
	}
	classGates := map[string]stats.Gates{}
	res.ClassGates = classGates
	for _, c := range cfg.Classes {
		classGates[c.Name] = c.Gates
	}
	var steps []ladderresult.LadderStep
	var runErr error
	for i, rate := range cfg.Steps {
		if to, moved := r.identityMoved(); moved { // between steps: no step measured it
			res.Partial, res.ChangedTo = cause.IdentityChanged, to
			break
		}
		ls, _, _, err := r.step(ctx, i+1, rate, 0, classGates)
		if err != nil {
			runErr = err
			break
		}
		steps = append(steps, ls)
		if ctx.Err() != nil {
			ls.Aborted, ls.AbortReason = true, ReasonInterrupted
			steps[len(steps)-1] = ls
			runErr = ctx.Err()
			break
		}
		if c := ls.CutCause(); c != "" {
			res.Partial = c
			if c == cause.IdentityChanged {
				res.ChangedTo = ls.IdentityEnd
			}
			break
		}
		if ls.Aborted || i == len(cfg.Steps)-1 {
			break
		}
		if why := stopHere(steps, cfg); why != "" {
			res.Stopped = why
			break
		}
		if err := sleep(ctx, cfg.Gap); err != nil {
			steps[len(steps)-1].Aborted, steps[len(steps)-1].AbortReason = true, ReasonInterrupted
			runErr = err
			break
		}
	}
	if res.Identity.IsZero() {
		res.Identity = r.ident // first seen during a step (cutStep)
	}
	res = Conclude(cfg, res, steps, runErr != nil)
	if cfg.HistoryFile != "" {
		if err := AppendHistory(cfg.HistoryFile, res); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("%w: %w", ErrHistoryNotWritten, err))
		}
	}
	return res, runErr
}

// Conclude judges a ladder's steps into res, the result Run began: its
// steps, capacity and knee for every class together and for each class,
// and why it was aborted (its last step's abort reason, or "interrupted"
// when interrupted). One prober's ladder (Run) and a fleet's merged steps
// are concluded by this one function. It sets Finished and writes no
// history.
func Conclude(cfg Config, res Result, steps []ladderresult.LadderStep, interrupted bool) Result {
	res.Steps = steps
	var names []string
	if len(cfg.Classes) > 1 {
		for _, c := range cfg.Classes {
			names = append(names, c.Name)
		}
	}
	res.Verdict, res.Classes = ladderresult.JudgeLadder(steps, names, cfg.GoodFractionTarget, cfg.KneeFactor)
	if n := len(steps); n > 0 && steps[n-1].Aborted {
		res.Aborted, res.AbortReason = true, fmt.Sprintf("step %d: %s", n, steps[n-1].AbortReason)
	} else if interrupted {
		res.Aborted, res.AbortReason = true, ReasonInterrupted
	}
	concludePartial(&res)
	res.Finished = cfg.Now()
	return res
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// step runs one step: its open-loop stream for StepDuration from ledger
// offset start (0: now), then waits for its requests to finish (at most
// Settle) and summarises them.
func (r *Runner) step(ctx context.Context, n int, rate float64, start time.Duration, classGates map[string]stats.Gates) (ladderresult.LadderStep, int, *stepState, error) {
	cfg := r.cfg
	led := r.g.Ledger()
	seq, err := schedule.New(schedule.Spec{Kind: cfg.Arrival, Burstiness: cfg.Burstiness, Seed: cfg.Seed ^ uint64(n)*0x9e3779b97f4a7c15},
		schedule.Step{Rate: rate, Duration: cfg.StepDuration})
	if err != nil {
		return ladderresult.LadderStep{}, 0, nil, fmt.Errorf("ladder step %d: %w", n, err)
	}
	// The server's view opens before the step's schedule starts, so a slow
	// scrape cannot push back its arrivals (a fleet shard's start is fixed
	// by the timetable; a lone ladder's is now, after the scrape).
	srv := scrape.Open(ctx, r.cfg.ServerMetrics)
	defer srv.Close()
	if start <= 0 {
		start = led.Now()
	}
	shares := Weights(cfg.Classes).Split(rate)
	st := r.newStep(n, rate, start, classGates, shares)
	// The host's health is read over the step's window, from its start: a
	// fleet step starts seconds after it is set up, and that idle wait
	// would dilute the CPU figure that tells a starved prober.
	hostBefore := make(chan hostload.Snapshot, 1)
	hostAt := time.AfterFunc(max(start-led.Now(), 0), func() { hostBefore <- cfg.Host.Take() })
	identStart := r.identityNow()
	r.mu.Lock()
	r.cur = st
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.cur = nil
		r.mu.Unlock()
	}()
	r.progress(Progress{Step: n, Rate: rate, Phase: "running"})

	stepCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	st.setCancel(cancel)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.watch(st, stop)
	}()
	err = r.g.Open(stepCtx, dispatch.OpenConfig{
		Arrivals: seq, Start: start, Window: cfg.StepDuration, MaxInFlight: cfg.MaxInFlight,
		Meta: r.meta(st), Admit: cfg.Admit, Exec: r.track(st), Spin: cfg.Spin,
	})
	// The arrivals are over: the host's health over the step's window
	// tells a starved prober from a slow target.
	if hostAt.Stop() { // stopped before its start: nothing was offered
		hostBefore <- cfg.Host.Take()
	}
	st.acc.SetHost(hostload.Between(<-hostBefore, cfg.Host.Take()))
	queue := markQueue(ctx, srv)
	// Arrivals stopped early (a mid-step rule, Abort, ctx ended) shorten
	// the step's window to the time its schedule actually ran: every
	// arrival recorded was planned before now (Open ends those that fell
	// due unsent), and rates and the generator's verdict are judged over
	// what was asked of it, not over the StepDuration it never reached.
	if stepCtx.Err() != nil {
		w := led.Now() - start // SetWindow: never longer, never under 1 ms
		st.acc.SetWindow(w)
		for _, a := range st.class {
			a.SetWindow(w)
		}
	}
	close(stop)
	wg.Wait()
	if err != nil {
		return ladderresult.LadderStep{}, 0, nil, fmt.Errorf("ladder step %d: %w", n, err)
	}
	r.settle(ctx, st)
	ls, pending := r.stepResult(ctx, st, shares, srv, queue, identStart)
	return ls, pending, st, nil
}

// newStep is step n's state before its first arrival: its accumulator
// and each class's (at the class's share of rate), and its in-step TTFT
// limit.
func (r *Runner) newStep(n int, rate float64, start time.Duration, classGates map[string]stats.Gates, shares []float64) *stepState {
	cfg := r.cfg
	st := &stepState{
		n: n, rate: rate, start: start, note: make(chan struct{}, 1),
		rng:    rand.New(rand.NewPCG(cfg.Seed, uint64(n))),
		flight: map[uint64]*inFlight{},
		acc: stats.NewAccumulator(stats.Config{
			Mode: ledger.ModeOpen, RequestedRate: rate, Start: start, Window: cfg.StepDuration,
			ClassGates: classGates, Validity: cfg.Validity, Steady: true,
		}),
		class: map[string]*stats.Accumulator{},
	}
	if cfg.Abort.TTFTGateMultiple > 0 && cfg.TTFTGate > 0 {
		st.limit = time.Duration(cfg.Abort.TTFTGateMultiple * float64(cfg.TTFTGate))
	}
	for i, c := range cfg.Classes {
		st.class[c.Name] = stats.NewAccumulator(stats.Config{
			Mode: ledger.ModeOpen, RequestedRate: shares[i], Start: start, Window: cfg.StepDuration,
			Gates: c.Gates, Validity: cfg.Validity,
		})
	}
	return st
}

// watch runs while the step's arrivals do, until stop is closed: every
// ProgressEvery it reports progress and applies the mid-step rules, which
// end the step's arrivals at once (stepState.abort): a deploy (the step
// measures no one identity), the abort rules once MidStepMin requests
// have finished (the generator's verdict needs the whole window), and
// requests still waiting past the TTFT limit (finished requests alone lag
// an overload by its own latency).
func (r *Runner) watch(st *stepState, stop <-chan struct{}) {
	cfg, led := r.cfg, r.g.Ledger()
	t := time.NewTicker(cfg.ProgressEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		p, f := st.counts()
		now := led.Now()
		r.progress(Progress{Step: st.n, Rate: st.rate, Phase: "running", Elapsed: now - st.start, Planned: p, Finished: f})
		if to, moved := r.identityMoved(); moved {
			st.abort(midStep + identityReason(r.ident, to))
			return
		}
		if cfg.MidStepMin <= 0 {
			continue
		}
		why := ""
		if f >= cfg.MidStepMin {
			rules := cfg.Abort
			rules.OnGeneratorInvalid = false
			why = rules.Check(st.acc.Summary(), cfg.TTFTGate)
		}
		if why == "" {
			why = st.ttftLowerBound(now, cfg.ExecMarksFirstToken, cfg.MidStepMin, cfg.Abort.TTFTGateMultiple, cfg.TTFTGate)
		}
		if why != "" {
			st.abort(midStep + why)
			return
		}
	}
}

// settle waits for the step's requests to finish, at most cfg.Settle (or
// until ctx ends), reporting progress.
func (r *Runner) settle(ctx context.Context, st *stepState) {
	cfg, led := r.cfg, r.g.Ledger()
	deadline := time.NewTimer(cfg.Settle)
	defer deadline.Stop()
	tick := time.NewTicker(cfg.ProgressEvery)
	defer tick.Stop()
	for {
		p, f := st.counts()
		if f >= p {
			return
		}
		select {
		case <-st.note:
		case <-tick.C:
			r.progress(Progress{Step: st.n, Rate: st.rate, Phase: "settling", Elapsed: led.Now() - st.start, Planned: p, Finished: f})
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// stepResult is the settled step's row and its requests still pending:
// those in flight when the settle ended have no record and count as
// planned and not good (Summary.Pending); the abort rules judge the
// whole window unless a mid-step rule already stopped it; each class's
// summary shares the step's generator verdict.
func (r *Runner) stepResult(ctx context.Context, st *stepState, shares []float64, srv scrape.Session, queue serverQueue, identStart ladderresult.Identity) (ladderresult.LadderStep, int) {
	cfg := r.cfg
	p, f := st.counts()
	st.acc.SetPending(p - f)
	for name, a := range st.class {
		a.SetPending(st.classPending(name))
	}
	sum := st.acc.Summary()
	reason := st.aborted()
	if reason == "" && ctx.Err() == nil {
		reason = cfg.Abort.Check(sum, cfg.TTFTGate)
	}
	ls := ladderresult.LadderStep{Index: st.n, Rate: st.rate, Summary: sum, Aborted: reason != "", AbortReason: reason, Server: srv.End(ctx)}
	for i, c := range cfg.Classes {
		cs := st.class[c.Name].Summary()
		cs.Validity = sum.Validity // one generator: the step's verdict is every class's
		ls.Classes = append(ls.Classes, ladderresult.ClassStep{Class: c.Name, Rate: shares[i], Summary: cs})
	}
	judgeSteady(&ls, queue)
	r.cutStep(&ls, st, identStart)
	r.progress(Progress{Step: st.n, Rate: st.rate, Phase: "done", Elapsed: r.g.Ledger().Now() - st.start, Planned: p, Finished: f, Row: &ls})
	return ls, sum.Pending
}
