package daemon

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmprobe/llmprobe/internal/budget"
	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/fleet"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/statuspage"
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
	plan    *wiring.Plan   // the run, assembled: prompts, executors, ladder
	state   *targetState   // survives reloads
	budget  *budget.Budget // state.budget when this config sets a budget, else nil
	// budgetLimits are applied to the (possibly shared) budget at start, so
	// a refused reload never changes the running limits.
	budgetLimits budget.Limits
	ladder       *ladder.Runner
	sched        ladder.Schedule
	ladderPhase  time.Duration // after each of sched's instants (ladderspread.go)
	fleet        *fleet.Ladder // in a fleet: the fleet's ladder around this shard's share (ladder)

	trigger chan string // identity change → ladder now
	cancel  context.CancelFunc
	done    sync.WaitGroup
	alive   atomic.Int32 // goroutines of this run still running
	flying  atomic.Int64 // requests of this run still in flight

	mu        sync.Mutex
	laddering string                    // "" or "ladder step i/n"
	queued    *queuedLadder             // the ladder waiting its turn (nil: none)
	step      statuspage.LadderProgress // the ladder step last started (status page)
	lastOut   ledger.Outcome
	lastRsn   ledger.Reason
}

func newTargetRun(d *Daemon, cfg *config.Config, index int, t config.Target) (_ *targetRun, err error) {
	r := &targetRun{name: t.Name, index: index, cfg: t, global: cfg, state: d.stateFor(t.Name), trigger: make(chan string, 1)}
	// One call assembles the run: client, classes, prompts, executors,
	// retries, budget, ladder and server metrics (wiring.Plan).
	plan, err := wiring.NewPlan(t, wiring.PlanOptions{
		Client: wiring.ClientOptions{Buffers: d.buffers, Logger: d.log.With("target", t.Name),
			Hook: d.opts.Tracing.Hook(t.Name, telemetry.OperationName(t.API))},
		Shard: d.node.Identity(), // in a fleet: this shard's share of the baseline, budgets and ladder steps
		Index: index, Limits: cfg.Limits, Params: r.boundUsage, Wrap: r.inFlight,
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			plan.Close()
		}
	}()
	r.cfg, r.plan, r.client, r.target, r.classes = plan.Target, plan, plan.Client, plan.Endpoint, plan.Classes
	if plan.Limited {
		r.budgetLimits = plan.Budget
		if r.state.budget.Load() == nil {
			r.state.budget.CompareAndSwap(nil, budget.New(r.budgetLimits, d.now))
		}
		r.budget = r.state.budget.Load()
	}
	if plan.HasLadder {
		lc := plan.Ladder
		if r.budget != nil {
			lc.Admit = r.budget.Admit
		}
		lc.Progress = r.trackProgress(d.now, r.progress(d))
		lc.Now = d.now
		lc.Identity = r.state.identity
		lr, err := ladder.New(lc, d.group, plan.LadderExec(d.led.Now))
		if err != nil {
			return nil, fmt.Errorf("ladder: %w", err)
		}
		r.ladder, r.sched = lr, plan.Schedule
		r.ladderPhase = ladderPhase(cfg, t.Name, plan.Schedule)
		if r.fleet, err = r.fleetLadder(d, lr, plan.FleetSteps); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// inFlight tracks the requests inner performs in the target's flight set.
func (r *targetRun) inFlight(inner dispatch.Exec) dispatch.Exec {
	return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		r.flying.Add(1)
		r.state.flight.add(rec.ID, rec.Planned)
		ladder := rec.Traffic == ledger.TrafficLadder
		if ladder {
			r.state.settle.fly(1)
		}
		defer func() {
			if ladder {
				r.state.settle.fly(-1)
			}
			r.state.flight.remove(rec.ID)
			r.flying.Add(-1)
		}()
		return inner(ctx, rec, dispatched)
	}
}

// start launches the baseline streams, the ladder timetable and the identity
// watcher.
func (r *targetRun) start(d *Daemon) {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	// The live verdict judges by this configuration's thresholds (a
	// reload that changes its limits starts the window afresh).
	r.state.validity.SetConfig(r.plan.Validity)
	d.route.add(r.name, r.sink(d))
	if err := r.state.status.Seed(r.cfg.Ladder.HistoryFile); err != nil {
		d.log.Warn("status page: ladder history not read", "target", r.name, "err", err)
	}
	u := r.target.URL // parsed once, by wiring
	port, _ := strconv.Atoi(u.Port())
	d.rec.SetEndpoint(r.name, telemetry.Endpoint{Provider: telemetry.ProviderName(r.cfg.API), RequestModel: r.cfg.Model,
		Address: u.Hostname(), Port: port})
	stagger := startStagger(r.state, r.index)
	boundary := r.cfg.TTFTBoundary                      // read by ledger.TTFTBoundary at load
	traffic := []ledger.Traffic{ledger.TrafficBaseline} // no ladder series for a target without a ladder
	if r.cfg.Ladder.Enabled {
		traffic = append(traffic, ledger.TrafficLadder)
	}
	for i, c := range r.classes {
		d.rec.InitSeries(r.name, c.Name, traffic...)
		d.rec.SetGates(r.name, c.Name, telemetry.Gates{TTFT: c.Gates.TTFT, TPOT: c.Gates.TPOT, E2E: c.Gates.E2E})
		d.rec.InitChecks(r.name, c.Name, c.Checks) // a canary class's checks at zero (none on another)
		if !r.cfg.Baseline.Enabled || r.cfg.Baseline.Rate <= 0 {
			d.rec.SetArrivalRate(r.name, c.Name, ledger.TrafficBaseline, 0)
			continue
		}
		plan, err := r.plan.BaselinePlan(i)
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
		oc.Exec = r.plan.Exec(i, d.led.Now)
		r.goRun(func() {
			if err := d.group.Open(ctx, oc); err != nil {
				d.log.Error("baseline stream stopped", "target", r.name, "class", class, "err", err)
			}
		})
	}
	if r.fleet != nil {
		r.fleet.Open()
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

// StaggerStep is the start stagger between two targets' first baseline
// arrivals, by their index in the configuration.
const StaggerStep = 137 * time.Millisecond

// startStagger is how long after its start a target's baseline schedule
// begins: index × StaggerStep for a target whose streams start for the
// first time in this process (every target at the daemon's start, a target
// a reload adds), so that many targets' arrivals do not line up; nothing
// for a target that was running before a reload, whose streams go on at
// once (a reload delays no unchanged target; its Poisson or gamma
// schedule draws its first gap afresh, a constant one sends its first
// request half an interval after the reload).
func startStagger(st *targetState, index int) time.Duration {
	if st.streamed.Swap(true) {
		return 0
	}
	return time.Duration(index) * StaggerStep
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
	if r.fleet != nil {
		r.fleet.Close()
	}
}

func (r *targetRun) wait() {
	r.done.Wait()
	r.client.CloseIdleConnections()
}

// sink sees every finished record of this target: budgets, identity,
// validity, ladder steps.
func (r *targetRun) sink(d *Daemon) ledger.Sink {
	return ledger.SinkFunc(func(rec *ledger.Record) {
		if b := r.state.budget.Load(); b != nil {
			if bound := b.Charge(rec); bound > 0 {
				r.logInvalidUsage(d, rec, bound)
			}
		}
		r.state.ladderSpan.count(rec)
		r.state.settle.record(rec)
		if r.ladder != nil && rec.Traffic == ledger.TrafficLadder {
			r.ladder.Record(rec)
		}
		if rec.Traffic != ledger.TrafficProbe {
			// The generator's verdict judges the target's own schedules: a
			// /probe scrape is planned by its handler, and one refused at
			// probe.max_concurrent is not this target's in-flight cap.
			r.state.validity.Record(d.now(), rec)
		}
		r.countOutcome(d, rec)
		r.state.status.Record(d.now(), rec, r.gates(rec.Class))
		r.state.checks.record(d.now(), rec, r.state.identity())
		r.mu.Lock()
		r.lastOut, r.lastRsn = rec.Outcome, rec.Reason
		r.mu.Unlock()
		if rec.Model != "" {
			r.observeIdentity(d, rec.Model, nil, false)
		}
	})
}
