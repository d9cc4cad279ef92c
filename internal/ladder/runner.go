package ladder

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/hostload"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// Class is a request class of the ladder's traffic: arrivals are assigned
// classes by weight, and each class's gates judge its requests.
type Class struct {
	Name   string
	Weight float64
	Gates  stats.Gates
}

// Progress is reported at the start of each step, about every
// ProgressEvery while it runs, while it settles and when it ends.
type Progress struct {
	Target   string
	Step     int // 1-based
	Steps    int
	Rate     float64
	Phase    string        // running | settling | done
	Elapsed  time.Duration // since the step started
	Planned  int           // arrivals planned so far in this step
	Finished int           // of which finished
	Row      *StepRow      // the step's row, when Phase is done
}

// Config is one ladder.
type Config struct {
	Target  string
	API     string
	Classes []Class // empty: one class "default" without gates
	// TTFTBoundary is stamped on every planned record ("" = content).
	TTFTBoundary ledger.TTFTBoundary

	Steps        []float64 // offered rates, req/s
	StepDuration time.Duration
	Gap          time.Duration // pause between steps (after the previous step settled)
	MaxRate      float64       // hard maximum: a ladder with a step above it is refused
	Arrival      schedule.Kind // "" = Poisson
	Burstiness   float64       // gamma shape k (schedule.Spec.Burstiness); 0 = 1
	Seed         uint64
	MaxInFlight  int            // per step; 0 = no cap
	Admit        dispatch.Admit // budgets; optional
	// Spin spin-waits the last Spin of each arrival wait (see
	// dispatch.OpenConfig.Spin); 0 sleeps.
	Spin time.Duration

	Abort    AbortRules
	TTFTGate time.Duration // gate of Abort.TTFTGateMultiple; 0 = the smallest class TTFT gate
	// StopAt is where the ladder stops climbing ("" = StopAtCapacity).
	// Whatever it says, no step more than one past the first failing step
	// is ever offered.
	StopAt StopAt
	// ExecMarksFirstToken says the Exec calls the function FirstTokenFunc
	// returns for its context when a request's first token arrives (see
	// protocol.ObserveFirstToken). The in-step TTFT rule then also counts
	// requests still waiting for a first token past the limit; without it,
	// only finished requests are judged.
	ExecMarksFirstToken bool
	GoodFractionTarget  float64
	KneeFactor          float64

	// Settle is how long a step's requests may still run after its window
	// before the step is summarised (use the target's total timeout); those
	// still in flight then are reported as Pending and left out of the
	// step's counts. 0 means 30s.
	Settle time.Duration
	// MidStepMin is the number of finished requests from which abort rules
	// (all but generator validity) are also checked while a step runs;
	// 0 means 20, negative disables mid-step checks.
	MidStepMin    int
	ProgressEvery time.Duration // 0 means 1s
	Validity      stats.ValidityConfig
	// Host reads the prober host's health over each step, so that an
	// invalid step names a starved host; nil = a reader of /proc.
	Host        *hostload.Reader
	HistoryFile string         // "" = no history
	Progress    func(Progress) // optional; called from one goroutine at a time
	Now         func() time.Time
}

// StopAt says where a ladder stops climbing.
type StopAt string

// Where a ladder stops.
const (
	// StopAtKnee: after the knee step (the first whose TTFT p95 exceeds
	// KneeFactor × the lowest step's), or after the first failing step if
	// that comes first. For busy services: the least load past the point
	// where latency starts to climb.
	StopAtKnee StopAt = "knee"
	// StopAtCapacity (the default): after the first failing step (see
	// firstFailing: a class that met its gates at a lower step no longer
	// does, or none meets them). Capacity is then measured (bracketed): the
	// true limit lies between the capacity step and that one.
	StopAtCapacity StopAt = "capacity"
	// StopAtTop: climb to the top step, but offer at most one step past
	// the first failing step (to confirm the failure on the curve).
	StopAtTop StopAt = "top"
)

// ParseStopAt parses "knee", "capacity" (or "") and "top".
func ParseStopAt(s string) (StopAt, error) {
	switch StopAt(s) {
	case "", StopAtCapacity:
		return StopAtCapacity, nil
	case StopAtKnee, StopAtTop:
		return StopAt(s), nil
	}
	return "", fmt.Errorf("ladder: unknown stop_at %q (want knee, capacity or top)", s)
}

// stepsPastFailure is how many steps may follow the first failing step.
func (s StopAt) stepsPastFailure() int {
	if s == StopAtTop {
		return 1
	}
	return 0
}

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
	if _, err := schedule.ParseKind(string(cfg.Arrival)); err != nil {
		errs = append(errs, fmt.Errorf("ladder: %w", err))
	}
	if _, err := ParseStopAt(string(cfg.StopAt)); err != nil {
		errs = append(errs, err)
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
	cfg.StopAt, _ = ParseStopAt(string(cfg.StopAt))
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

// stepState is the live state of the step being run.
type stepState struct {
	n     int
	rate  float64
	start time.Duration // ledger offset of the step's schedule offset 0
	acc   *stats.Accumulator
	class map[string]*stats.Accumulator // each class's own records and gates
	note  chan struct{}                 // a record finished (capacity 1)

	mu       sync.Mutex
	planned  int
	finished int
	rng      *rand.Rand
	// The in-step TTFT rule: limit is TTFTGateMultiple × TTFTGate (0:
	// off); ttftN/ttftOver count the step's finished ok requests with a
	// TTFT and those above limit; flight holds its requests in flight.
	limit    time.Duration
	ttftN    int
	ttftOver int
	flight   map[uint64]*inFlight
}

// inFlight is one request of the step in flight: its planned offset and,
// once its Exec marked it, when its first token arrived.
type inFlight struct {
	planned time.Duration
	first   atomic.Int64 // ledger offset of the first token; 0 = none yet
}

func (st *stepState) counts() (planned, finished int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.planned, st.finished
}

// Record implements ledger.Sink: it keeps this target's ladder records of
// the step being run.
func (r *Runner) Record(rec *ledger.Record) {
	if rec.Traffic != ledger.TrafficLadder || rec.Target != r.cfg.Target {
		return
	}
	r.mu.Lock()
	st := r.cur
	r.mu.Unlock()
	if st == nil || rec.Step != st.n || rec.ArrivalPlanned() < st.start {
		return // a straggler of an earlier step or ladder
	}
	st.acc.Add(rec)
	if a := st.class[rec.Class]; a != nil {
		a.Add(rec)
	}
	st.mu.Lock()
	st.finished++
	if ttft, ok := rec.TTFT(); ok && rec.Outcome == ledger.OK && st.limit > 0 {
		st.ttftN++
		if ttft > st.limit {
			st.ttftOver++
		}
	}
	st.mu.Unlock()
	select {
	case st.note <- struct{}{}:
	default:
	}
}

// firstTokenKey carries a ladder request's first-token mark in its context.
type firstTokenKey struct{}

// FirstTokenFunc returns the function an Exec calls, once, when the request
// whose context is ctx receives its first token (under its TTFT boundary),
// or nil when ctx is not a ladder request's. It lets the in-step TTFT rule
// tell a request still waiting for its first token from one streaming a
// long answer.
func FirstTokenFunc(ctx context.Context) func() {
	f, _ := ctx.Value(firstTokenKey{}).(func())
	return f
}

// track wraps the Exec: while a request of step st runs it is in st's
// flight set, and its context carries its first-token mark.
func (r *Runner) track(st *stepState) dispatch.Exec {
	led := r.g.Ledger()
	return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		f := &inFlight{planned: rec.Planned}
		st.mu.Lock()
		st.flight[rec.ID] = f
		st.mu.Unlock()
		defer func() {
			st.mu.Lock()
			delete(st.flight, rec.ID)
			st.mu.Unlock()
		}()
		if r.cfg.ExecMarksFirstToken {
			ctx = context.WithValue(ctx, firstTokenKey{}, func() { f.first.CompareAndSwap(0, int64(led.Now())) })
		}
		return r.exec(ctx, rec, dispatched)
	}
}

// ttftLowerBound applies the TTFT rule to what is known at ledger offset
// now: the step's finished ok requests, the requests in flight whose first
// token arrived (their TTFT is known) and those in flight still waiting for
// it past the limit (their TTFT, should they succeed, exceeds it). Requests
// waiting less than the limit are not judged yet. It reports why the step
// must stop, or "". min is the smallest number of judged requests.
func (st *stepState) ttftLowerBound(now time.Duration, marks bool, min int, multiple float64, gate time.Duration) string {
	if st.limit <= 0 {
		return ""
	}
	st.mu.Lock()
	n, over, waiting := st.ttftN, st.ttftOver, 0
	for _, f := range st.flight {
		switch first := time.Duration(f.first.Load()); {
		case first > 0:
			n++
			if first-f.planned > st.limit {
				over++
			}
		case marks && now-f.planned > st.limit:
			n++
			over++
			waiting++
		}
	}
	st.mu.Unlock()
	// Nearest rank: p95 > limit when fewer than 95% of the TTFTs are within it.
	if n < min || n == 0 || float64(n-over) >= 0.95*float64(n) {
		return ""
	}
	return fmt.Sprintf("TTFT p95 above %g × gate %s: %d of %d requests over %s (%d still waiting for their first token)",
		multiple, gate, over, n, st.limit, waiting)
}

func (r *Runner) meta(st *stepState) func(time.Duration) ledger.Meta {
	total := 0.0
	for _, c := range r.cfg.Classes {
		total += c.Weight
	}
	return func(time.Duration) ledger.Meta {
		st.mu.Lock()
		st.planned++
		x := st.rng.Float64() * total
		st.mu.Unlock()
		class := r.cfg.Classes[len(r.cfg.Classes)-1].Name
		for _, c := range r.cfg.Classes {
			if x < c.Weight {
				class = c.Name
				break
			}
			x -= c.Weight
		}
		return ledger.Meta{Traffic: ledger.TrafficLadder, Target: r.cfg.Target, Class: class, API: r.cfg.API, Step: st.n,
			During: ledger.DuringLadder, TTFTBoundary: r.cfg.TTFTBoundary}
	}
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
	res := Result{
		Kind: "ladder", Target: cfg.Target, Trigger: trigger, Started: cfg.Now(), StopAt: string(cfg.StopAt),
		StepDuration: cfg.StepDuration.Seconds(), GoodFractionTarget: cfg.GoodFractionTarget, KneeFactor: cfg.KneeFactor,
	}
	classGates := map[string]stats.Gates{}
	res.ClassGates = classGates
	for _, c := range cfg.Classes {
		classGates[c.Name] = c.Gates
	}
	var steps []stats.LadderStep
	var pending []int
	var runErr error
	for i, rate := range cfg.Steps {
		ls, pend, err := r.step(ctx, i+1, rate, classGates)
		if err != nil {
			runErr = err
			break
		}
		steps = append(steps, ls)
		pending = append(pending, pend)
		if ctx.Err() != nil {
			ls.Aborted, ls.AbortReason = true, "interrupted"
			steps[len(steps)-1] = ls
			runErr = ctx.Err()
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
			steps[len(steps)-1].Aborted, steps[len(steps)-1].AbortReason = true, "interrupted"
			runErr = err
			break
		}
	}
	res.Summaries = steps
	var names []string
	if len(cfg.Classes) > 1 {
		for _, c := range cfg.Classes {
			names = append(names, c.Name)
		}
	}
	var v stats.Verdict
	res.Steps, v, res.Classes = Analyze(steps, names, cfg.GoodFractionTarget, cfg.KneeFactor)
	res.Capacity, res.CapacityStep, res.CapacityBound, res.Knee, res.KneeStep = v.Capacity, v.CapacityStep, v.CapacityBound, v.Knee, v.KneeStep
	for i := range res.Steps {
		res.Steps[i].Pending = pending[i]
	}
	if n := len(steps); n > 0 && steps[n-1].Aborted {
		res.Aborted, res.AbortReason = true, fmt.Sprintf("step %d: %s", n, steps[n-1].AbortReason)
	} else if runErr != nil {
		res.Aborted, res.AbortReason = true, "interrupted"
	}
	res.Finished = cfg.Now()
	if cfg.HistoryFile != "" {
		if err := AppendHistory(cfg.HistoryFile, res); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("%w: %w", ErrHistoryNotWritten, err))
		}
	}
	return res, runErr
}

// stopHere says why the ladder must not offer another step after steps
// (the steps run so far, none aborted), or "" to go on: the first failing
// step (see firstFailing) ends the climb at once, or one step later with
// StopAtTop; with StopAtKnee the knee step ends it too.
func stopHere(steps []stats.LadderStep, cfg Config) string {
	n := len(steps)
	failed := firstFailing(steps, cfg.GoodFractionTarget)
	if failed > 0 && n >= failed+cfg.StopAt.stepsPastFailure() {
		if n == failed {
			return fmt.Sprintf("stop_at %s: step %d failed its gates (good fraction below %g)", cfg.StopAt, steps[failed-1].Index, cfg.GoodFractionTarget)
		}
		return fmt.Sprintf("stop_at %s: step %d is one past step %d, the first that failed its gates", cfg.StopAt, steps[n-1].Index, steps[failed-1].Index)
	}
	if cfg.StopAt == StopAtKnee {
		if v := stats.Judge(steps, cfg.GoodFractionTarget, cfg.KneeFactor); v.KneeStep > 0 {
			return fmt.Sprintf("stop_at knee: the knee is step %d", steps[v.KneeStep-1].Index)
		}
	}
	return ""
}

// firstFailing returns the 1-based position of the first failing step, 0
// when none: a valid step at which a class that met its gates at a lower
// valid step no longer does (the load, not the class, is to blame), or at
// which no class meets them. A class that never met its gates (a gate it
// cannot reach at any rate) does not stop the climb while another class
// still meets its own. An invalid step says nothing about the target and is
// never used (it stops the ladder only under Abort.OnGeneratorInvalid).
// A ladder without classes is one class.
func firstFailing(steps []stats.LadderStep, target float64) int {
	metBefore := map[string]bool{}
	for i, s := range steps {
		if !s.Summary.Validity.Valid {
			continue
		}
		type judged struct {
			class string
			met   bool
		}
		var js []judged
		if len(s.Classes) == 0 {
			js = append(js, judged{"", stats.Met(s.Summary, target)})
		}
		for _, c := range s.Classes {
			if c.Summary.Planned > 0 { // a class with no arrivals in the step says nothing
				js = append(js, judged{c.Class, stats.Met(c.Summary, target)})
			}
		}
		anyMet := false
		for _, j := range js {
			if j.met {
				anyMet = true
			} else if metBefore[j.class] {
				return i + 1
			}
		}
		if len(js) > 0 && !anyMet {
			return i + 1
		}
		for _, j := range js {
			if j.met {
				metBefore[j.class] = true
			}
		}
	}
	return 0
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

// step runs one step: its open-loop stream for StepDuration, then waits for
// its requests to finish (at most Settle) and summarises them.
func (r *Runner) step(ctx context.Context, n int, rate float64, classGates map[string]stats.Gates) (stats.LadderStep, int, error) {
	cfg := r.cfg
	led := r.g.Ledger()
	seq, err := schedule.New(schedule.Spec{Kind: cfg.Arrival, Burstiness: cfg.Burstiness, Seed: cfg.Seed ^ uint64(n)*0x9e3779b97f4a7c15},
		schedule.Step{Rate: rate, Duration: cfg.StepDuration})
	if err != nil {
		return stats.LadderStep{}, 0, fmt.Errorf("ladder step %d: %w", n, err)
	}
	start := led.Now()
	st := &stepState{
		n: n, rate: rate, start: start, note: make(chan struct{}, 1),
		rng:    rand.New(rand.NewPCG(cfg.Seed, uint64(n))),
		flight: map[uint64]*inFlight{},
		acc: stats.NewAccumulator(stats.Config{
			Mode: ledger.ModeOpen, RequestedRate: rate, Start: start, Window: cfg.StepDuration,
			ClassGates: classGates, Validity: cfg.Validity,
		}),
		class: map[string]*stats.Accumulator{},
	}
	if cfg.Abort.TTFTGateMultiple > 0 && cfg.TTFTGate > 0 {
		st.limit = time.Duration(cfg.Abort.TTFTGateMultiple * float64(cfg.TTFTGate))
	}
	total := 0.0
	for _, c := range cfg.Classes {
		total += c.Weight
	}
	for _, c := range cfg.Classes {
		st.class[c.Name] = stats.NewAccumulator(stats.Config{
			Mode: ledger.ModeOpen, RequestedRate: rate * c.Weight / total, Start: start, Window: cfg.StepDuration,
			Gates: c.Gates, Validity: cfg.Validity,
		})
	}
	hostBefore := cfg.Host.Take()
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
	var (
		midReason string
		wg        sync.WaitGroup
		stop      = make(chan struct{})
	)
	wg.Add(1)
	go func() { // progress and mid-step abort checks
		defer wg.Done()
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
			r.progress(Progress{Step: n, Rate: rate, Phase: "running", Elapsed: now - start, Planned: p, Finished: f})
			if cfg.MidStepMin <= 0 {
				continue
			}
			why := ""
			if f >= cfg.MidStepMin {
				rules := cfg.Abort
				rules.OnGeneratorInvalid = false // the verdict needs the whole window
				why = rules.Check(st.acc.Summary(), cfg.TTFTGate)
			}
			if why == "" {
				// Finished requests alone lag an overload by its own
				// latency: count those still waiting past the limit.
				why = st.ttftLowerBound(now, cfg.ExecMarksFirstToken, cfg.MidStepMin, cfg.Abort.TTFTGateMultiple, cfg.TTFTGate)
			}
			if why != "" {
				midReason = "mid-step: " + why
				cancel()
				return
			}
		}
	}()
	err = r.g.Open(stepCtx, dispatch.OpenConfig{
		Arrivals: seq, Start: start, Window: cfg.StepDuration, MaxInFlight: cfg.MaxInFlight,
		Meta: r.meta(st), Admit: cfg.Admit, Exec: r.track(st), Spin: cfg.Spin,
	})
	// The arrivals are over: the host's health over the step's window
	// tells a starved prober from a slow target.
	st.acc.SetHost(hostload.Between(hostBefore, cfg.Host.Take()))
	close(stop)
	wg.Wait()
	if err != nil {
		return stats.LadderStep{}, 0, fmt.Errorf("ladder step %d: %w", n, err)
	}

	// Settle: wait for the step's requests, at most Settle.
	deadline := time.NewTimer(cfg.Settle)
	defer deadline.Stop()
	tick := time.NewTicker(cfg.ProgressEvery)
	defer tick.Stop()
settle:
	for {
		p, f := st.counts()
		if f >= p {
			break
		}
		select {
		case <-st.note:
		case <-tick.C:
			r.progress(Progress{Step: n, Rate: rate, Phase: "settling", Elapsed: led.Now() - start, Planned: p, Finished: f})
		case <-deadline.C:
			break settle
		case <-ctx.Done():
			break settle
		}
	}
	sum := st.acc.Summary()
	reason := midReason
	if reason == "" && ctx.Err() == nil {
		reason = cfg.Abort.Check(sum, cfg.TTFTGate)
	}
	ls := stats.LadderStep{Index: n, Rate: rate, Summary: sum, Aborted: reason != "", AbortReason: reason}
	for _, c := range cfg.Classes {
		cs := st.class[c.Name].Summary()
		cs.Validity = sum.Validity // one generator: the step's verdict is every class's
		ls.Classes = append(ls.Classes, stats.ClassStep{Class: c.Name, Rate: rate * c.Weight / total, Summary: cs})
	}
	p, f := st.counts()
	row := Row(ls, cfg.GoodFractionTarget)
	row.Pending = p - f
	r.progress(Progress{Step: n, Rate: rate, Phase: "done", Elapsed: led.Now() - start, Planned: p, Finished: f, Row: &row})
	return ls, p - f, nil
}
