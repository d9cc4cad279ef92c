package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmprobe/llmprobe/internal/budget"
	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/telemetry"
	"github.com/llmprobe/llmprobe/internal/wiring"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// targetRun is one target's streams, ladder timetable and bookkeeping.
type targetRun struct {
	name    string
	index   int
	cfg     config.Target
	global  *config.Config
	client  *protocol.Client
	target  protocol.Target
	classes []workload.Class
	mixes   map[string]*workload.Mix // one per class: a stream per class
	// baselineExecs perform a class's baseline requests: the client, with
	// cancellation injection when configured (ladders run without it).
	baselineExecs map[string]dispatch.Exec
	state         *targetState   // survives reloads
	budget        *budget.Budget // state.budget when this config sets a budget, else nil
	// budgetLimits are applied to the (possibly shared) budget at start, so
	// a refused reload never changes the running limits.
	budgetLimits budget.Limits
	ladder       *ladder.Runner
	sched        ladder.Schedule

	trigger chan string // identity change → ladder now
	cancel  context.CancelFunc
	done    sync.WaitGroup
	alive   atomic.Int32 // goroutines of this run still running
	flying  atomic.Int64 // requests of this run still in flight

	mu        sync.Mutex
	laddering string // "" or "ladder step i/n"
	lastOut   ledger.Outcome
	lastRsn   ledger.Reason
}

func newTargetRun(d *Daemon, cfg *config.Config, index int, t config.Target) (_ *targetRun, err error) {
	client, target, err := wiring.Client(t, wiring.ClientOptions{Buffers: d.buffers, Logger: d.log.With("target", t.Name),
		Hook: d.opts.Tracing.Hook(t.Name, telemetry.OperationName(t.API))})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			client.CloseIdleConnections()
		}
	}()
	classes, err := wiring.Classes(t, index)
	if err != nil {
		return nil, err
	}
	r := &targetRun{
		name: t.Name, index: index, cfg: t, global: cfg, client: client, target: target,
		classes: classes, mixes: map[string]*workload.Mix{},
		state: d.stateFor(t.Name), trigger: make(chan string, 1),
	}
	for i, c := range classes {
		if r.mixes[c.Name], err = wiring.Mix(t, c, i); err != nil {
			return nil, err
		}
	}
	if _, err = wiring.Retry(t); err != nil { // the baseline's (ladders do not retry): refused here, not at start
		return nil, err
	}
	r.baselineExecs = make(map[string]dispatch.Exec, len(classes))
	for i, c := range classes {
		e := r.exec(d, r.paramsFor(c.Name))
		if in, ok := wiring.Injection(t, i); ok {
			if e, err = dispatch.Inject(in, e); err != nil {
				return nil, fmt.Errorf("cancellation: %w", err)
			}
		}
		r.baselineExecs[c.Name] = e
	}
	limits, limited, err := wiring.Budget(t)
	if err != nil {
		return nil, err
	}
	if limited {
		r.budgetLimits = limits
		if r.state.budget.Load() == nil {
			r.state.budget.CompareAndSwap(nil, budget.New(r.budgetLimits, d.now))
		}
		r.budget = r.state.budget.Load()
	}
	if t.Ladder.Enabled {
		lc, sched, err := wiring.Ladder(t, cfg.Limits)
		if err != nil {
			return nil, err
		}
		if r.budget != nil {
			lc.Admit = r.budget.Admit
		}
		lc.Progress = r.progress(d)
		lc.Now = d.now
		lc.ExecMarksFirstToken = true // ladderExec observes first tokens
		lr, err := ladder.New(lc, d.group, r.ladderExec(d))
		if err != nil {
			return nil, fmt.Errorf("ladder: %w", err)
		}
		r.ladder, r.sched = lr, sched
	}
	return r, nil
}

// exec performs one request of class c, tracking it in flight.
func (r *targetRun) exec(d *Daemon, params func(*ledger.Record) protocol.Params) dispatch.Exec {
	return r.inFlight(r.client.Exec(r.target, params, d.led.Now))
}

// inFlight tracks the requests inner performs in the target's flight set.
func (r *targetRun) inFlight(inner dispatch.Exec) dispatch.Exec {
	return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		r.flying.Add(1)
		r.state.flight.add(rec.ID, rec.Planned)
		defer func() {
			r.state.flight.remove(rec.ID)
			r.flying.Add(-1)
		}()
		return inner(ctx, rec, dispatched)
	}
}

func (r *targetRun) paramsFor(class string) func(*ledger.Record) protocol.Params {
	m := r.mixes[class]
	model, deltas := r.cfg.Model, r.cfg.UsageDeltas
	return func(*ledger.Record) protocol.Params {
		p := m.Next().Params
		p.Model = model
		p.UsageDeltas = deltas
		return p
	}
}

// ladderExec routes a ladder request to its class's prompts (the ladder
// assigns the class when it plans the arrival).
func (r *targetRun) ladderExec(d *Daemon) dispatch.Exec {
	execs := make(map[string]dispatch.Exec, len(r.mixes))
	first := ""
	anyToken := r.cfg.TTFTBoundary == string(ledger.TTFTAnyToken)
	for _, c := range r.classes {
		params := r.paramsFor(c.Name)
		execs[c.Name] = r.inFlight(func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
			t := r.target
			if mark := ladder.FirstTokenFunc(ctx); mark != nil {
				// The runner's in-step TTFT rule learns when the first
				// token arrived, so a request still waiting for one past
				// the limit counts against the step before it finishes.
				t.Adapter = protocol.ObserveFirstToken(t.Adapter, anyToken, mark)
			}
			return r.client.Do(ctx, t, params(rec), rec, d.led.Now, dispatched)
		})
		if first == "" {
			first = c.Name
		}
	}
	return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		e, ok := execs[rec.Class]
		if !ok {
			e = execs[first]
		}
		return e(ctx, rec, dispatched)
	}
}

// start launches the baseline streams, the ladder timetable and the identity
// watcher.
func (r *targetRun) start(d *Daemon) {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	// The live verdict judges against this configuration's limit (a
	// reload that changes it starts the window afresh).
	r.state.validity.SetConfig(stats.ValidityConfig{MaxLagP99: r.cfg.Ladder.MaxLagP99.D()})
	d.route.add(r.name, r.sink(d))
	u, _ := url.Parse(r.target.Base)
	port, _ := strconv.Atoi(u.Port())
	d.rec.SetEndpoint(r.name, telemetry.Endpoint{Provider: telemetry.ProviderName(r.cfg.API), RequestModel: r.cfg.Model,
		Address: u.Hostname(), Port: port})
	// Stagger targets so their arrivals do not line up.
	stagger := time.Duration(r.index) * 137 * time.Millisecond
	boundary, _ := ledger.ParseTTFTBoundary(r.cfg.TTFTBoundary) // validated by config
	for i, c := range r.classes {
		d.rec.InitSeries(r.name, c.Name, ledger.TrafficBaseline, ledger.TrafficLadder)
		d.rec.SetGates(r.name, c.Name, telemetry.Gates{TTFT: c.Gates.TTFT, TPOT: c.Gates.TPOT, E2E: c.Gates.E2E})
		if !r.cfg.Baseline.Enabled || r.cfg.Baseline.Rate <= 0 {
			d.rec.SetArrivalRate(r.name, c.Name, ledger.TrafficBaseline, 0)
			continue
		}
		plan, err := wiring.Baseline(r.cfg, r.classes, i)
		if err != nil {
			d.log.Error("baseline schedule", "target", r.name, "class", c.Name, "err", err)
			continue
		}
		d.rec.SetArrivalRate(r.name, c.Name, ledger.TrafficBaseline, plan.Rate)
		class := c.Name
		oc := plan.Open
		oc.Start = d.led.Now() + stagger
		if r.budget != nil {
			oc.Admit = r.budget.Admit
		}
		oc.Meta = func(planned time.Duration) ledger.Meta {
			return ledger.Meta{Traffic: ledger.TrafficBaseline, Target: r.name, Class: class, API: r.cfg.API, TTFTBoundary: boundary,
				During: r.state.ladderSpan.during(planned)}
		}
		oc.Exec = r.baselineExecs[class]
		r.goRun(func() {
			if err := d.group.Open(ctx, oc); err != nil {
				d.log.Error("baseline stream stopped", "target", r.name, "class", class, "err", err)
			}
		})
	}
	if r.ladder != nil {
		r.goRun(func() { r.ladderLoop(ctx, d) })
	}
	if r.polls() {
		r.goRun(func() { r.identityLoop(ctx, d) })
	} else {
		r.state.observeIdentity("", nil, true) // no version source: the model alone is the identity
	}
}

// goRun runs f on a goroutine of this run (counted for wait and finished).
func (r *targetRun) goRun(f func()) {
	r.done.Add(1)
	r.alive.Add(1)
	go func() {
		defer r.done.Done()
		defer r.alive.Add(-1)
		f()
	}()
}

// polls reports whether the identity includes a version polled from GET {base}/models.
func (r *targetRun) polls() bool {
	return r.cfg.Identity.ModelsField != "" || r.cfg.Identity.ResponseHeader != ""
}

// finished reports whether the run's goroutines have returned and none of
// its requests is in flight.
func (r *targetRun) finished() bool {
	return r.alive.Load() == 0 && r.flying.Load() == 0
}

// stop ends planning (in-flight requests belong to the group and finish or
// are drained). The target's sink stays hooked until reap: its last
// records must still be charged and counted.
func (r *targetRun) stop() {
	if r.cancel != nil {
		r.cancel()
	}
}

func (r *targetRun) wait() {
	r.done.Wait()
	r.client.CloseIdleConnections()
}

// ladderLoop runs the ladder on its timetable, or at once on an identity
// change. A ladder with neither every nor daily set (allowed with
// run_on_identity_change) waits for identity changes only.
func (r *targetRun) ladderLoop(ctx context.Context, d *Daemon) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	timed := r.sched.Every > 0 || r.sched.Daily != ""
	if r.cfg.Ladder.RunOnStart && !r.state.startLadderDone.Swap(true) {
		select {
		case r.trigger <- "start":
		default:
		}
	}
	for {
		var due <-chan time.Time
		if timed {
			next, err := ladder.Next(d.now(), r.sched)
			if err != nil {
				d.log.Error("ladder timetable", "target", r.name, "err", err)
				timed = false
			} else {
				timer.Reset(max(next.Sub(d.now()), 0))
				due = timer.C
			}
		}
		trigger := "schedule"
		select {
		case <-ctx.Done():
			return
		case <-due:
		case trigger = <-r.trigger:
			timer.Stop()
		}
		r.state.ladderSpan.begin(d.led.Now())
		res, err := r.ladder.Run(ctx, trigger)
		// Also when interrupted: its requests may still be in flight.
		r.state.ladderSpan.end(d.led.Now(), r.baselineSettle())
		r.setLaddering("")
		if err != nil && ctx.Err() == nil {
			d.log.Error("ladder", "target", r.name, "err", err)
		}
		if ctx.Err() != nil {
			return
		}
		d.ladderDone(r, res)
		for _, c := range r.classes {
			d.rec.SetArrivalRate(r.name, c.Name, ledger.TrafficLadder, 0)
		}
	}
}

// baselineSettle is how long after a ladder the target's baseline requests
// are still labelled during="ladder": ladder.baseline_settle, or the drain
// deadline when that is 0.
func (r *targetRun) baselineSettle() time.Duration {
	if s := r.cfg.Ladder.BaselineSettle.D(); s > 0 {
		return s
	}
	return r.global.Drain.Timeout.D()
}

func (r *targetRun) progress(d *Daemon) func(ladder.Progress) {
	return func(p ladder.Progress) {
		if p.Phase == "done" {
			r.setLaddering("")
			if p.Row != nil && !p.Row.Valid {
				d.log.Warn("ladder step invalid: not used for capacity or knee", "target", r.name, "step", p.Step, "rate", p.Rate,
					"causes", strings.Join(p.Row.CauseNames(), ","), "reasons", strings.Join(p.Row.Invalid, "; "))
			}
			return
		}
		r.setLaddering(fmt.Sprintf("ladder step %d/%d at %.3g req/s", p.Step, p.Steps, p.Rate))
		total := 0.0
		for _, c := range r.classes {
			total += c.Weight
		}
		for _, c := range r.classes {
			d.rec.SetArrivalRate(r.name, c.Name, ledger.TrafficLadder, p.Rate*c.Weight/total)
		}
	}
}

func (r *targetRun) setLaddering(s string) {
	r.mu.Lock()
	r.laddering = s
	r.mu.Unlock()
}

func (r *targetRun) stateText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.laddering != "" {
		return r.laddering
	}
	if r.budget != nil {
		if rem := r.budget.Remaining(); (rem.TokensLimited && rem.Tokens <= 0) || (rem.RequestsLimited && rem.Requests <= 0) {
			return "budget spent until " + rem.ResetAt.Format(time.RFC3339)
		}
	}
	return "probing"
}

// duringText is the status page's account of the target's baseline requests
// planned during ladders (labelled during="ladder", not in the SLO). start
// is the ledger's epoch, now its current offset.
func (r *targetRun) duringText(start time.Time, now time.Duration) string {
	none, during, until, running := r.state.ladderSpan.snapshot()
	txt := fmt.Sprintf("%d of %d baseline requests", during, none+during)
	switch {
	case running:
		txt += "; labelled during=\"ladder\" now (a ladder is running)"
	case until > now:
		txt += "; labelled during=\"ladder\" until " + start.Add(until).UTC().Format(time.RFC3339) + " (settle)"
	}
	return txt
}

// budgetText is today's spend split by use ("" without a budget).
func (r *targetRun) budgetText() string {
	if r.budget == nil {
		return ""
	}
	rem := r.budget.Remaining()
	sp := func(u budget.Use) budget.Spend { return rem.ByUse[u] }
	base := sp(budget.Use{Traffic: ledger.TrafficBaseline, During: ledger.DuringNone.Label()})
	dur := sp(budget.Use{Traffic: ledger.TrafficBaseline, During: ledger.DuringLadder.Label()})
	lad := sp(budget.Use{Traffic: ledger.TrafficLadder, During: ledger.DuringLadder.Label()})
	return fmt.Sprintf("%d requests, %d tokens: baseline %d/%d, baseline during ladders %d/%d, ladders %d/%d (requests/tokens)",
		rem.RequestsUsed, rem.TokensUsed, base.Requests, base.Tokens, dur.Requests, dur.Tokens, lad.Requests, lad.Tokens)
}

func (r *targetRun) lastOutcome() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lastOut == "" {
		return "none yet"
	}
	return string(r.lastOut) + "/" + string(r.lastRsn)
}

// sink sees every finished record of this target: budgets, identity,
// validity, ladder steps.
func (r *targetRun) sink(d *Daemon) ledger.Sink {
	return ledger.SinkFunc(func(rec *ledger.Record) {
		if b := r.state.budget.Load(); b != nil {
			b.Charge(rec)
		}
		r.state.ladderSpan.count(rec)
		if r.ladder != nil && rec.Traffic == ledger.TrafficLadder {
			r.ladder.Record(rec)
		}
		r.state.validity.Record(d.now(), rec)
		r.mu.Lock()
		r.lastOut, r.lastRsn = rec.Outcome, rec.Reason
		r.mu.Unlock()
		if rec.Model != "" {
			r.observeIdentity(d, rec.Model, nil, false)
		}
	})
}

// observeIdentity merges a sighting (the model named in a response, or a
// polled version) into the target's identity and publishes it; a change
// after the first complete sighting is counted by the recorder and, with
// ladder.run_on_identity_change, starts a ladder at once.
func (r *targetRun) observeIdentity(d *Daemon, model string, version *string, polled bool) {
	m, v, ok := r.state.observeIdentity(model, version, polled)
	if !ok {
		return
	}
	if !d.rec.SetTargetInfo(r.name, m, v) {
		return
	}
	d.log.Info("target identity changed", "target", r.name, "model", m, "version", v)
	if r.ladder != nil && r.cfg.Ladder.RunOnIdentityChange {
		select {
		case r.trigger <- "identity_change":
		default: // one is already due
		}
	}
}

// identityLoop polls GET {base}/models for the configured response header
// and models field, every identity.poll_every (Options.IdentityEvery when
// set). A failed poll keeps the version last seen.
func (r *targetRun) identityLoop(ctx context.Context, d *Daemon) {
	every := d.opts.IdentityEvery
	if every <= 0 {
		every = r.cfg.Identity.PollEvery.D()
	}
	if every <= 0 {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if version, err := r.pollIdentity(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			d.log.Warn("identity poll", "target", r.name, "err", r.client.Redactor().String(err.Error(), 200))
			r.observeIdentity(d, "", nil, true)
		} else {
			r.observeIdentity(d, "", &version, true)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pollIdentity reads the version from GET {base}/models: the configured
// response header, else the configured field of the entry for the target's
// model (or of the only entry). Both are server text: cleaned by the one
// rule (sanitize) with the client's Redactor, so a header echoing the API
// key shows only the marker.
func (r *targetRun) pollIdentity(ctx context.Context) (version string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := r.client.Get(ctx, r.target, "/models")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("GET models: status %d", resp.StatusCode)
	}
	red := r.client.Redactor()
	if h := r.cfg.Identity.ResponseHeader; h != "" {
		version = red.String(resp.Header.Get(h), maxIdentityBytes)
	}
	var body struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		return "", fmt.Errorf("GET models: decode: %w", err)
	}
	for _, m := range body.Data {
		if id, _ := m["id"].(string); id == r.cfg.Model || len(body.Data) == 1 {
			if f := r.cfg.Identity.ModelsField; f != "" {
				if v, ok := m[f]; ok && version == "" {
					version = red.String(fmt.Sprint(v), maxIdentityBytes)
				}
			}
			break
		}
	}
	return version, nil
}

// maxIdentityBytes bounds an identity value (model or version).
const maxIdentityBytes = 128
