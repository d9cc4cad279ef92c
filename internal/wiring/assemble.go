package wiring

import (
	"context"
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/budget"
	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/fleet"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/verdict"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// PlanOptions is what a run adds to its target's description.
type PlanOptions struct {
	Client ClientOptions
	// Shard is this prober's place in a fleet: the target becomes its
	// share (ForShard) and the ladder's steps its share of each step
	// (the fleet's rates stay in Plan.FleetSteps). The zero value, or a
	// prober alone, changes nothing.
	Shard fleet.Identity
	// Index is the target's place in its configuration (a class's default
	// name); 0 for the one-shot commands.
	Index int
	// Limits are the configuration's process-wide limits (limits.max_rate
	// bounds a ladder whose ladder.max_rate is unset).
	Limits config.Limits
	// Ladder builds the ladder even when ladder.enabled is false (the
	// ladder command); a target with a ladder enabled always has one.
	Ladder bool
	// Params, when set, wraps each class's prompt source (the daemon
	// bounds each request's usage in its budget with it).
	Params func(func(*ledger.Record) protocol.Params) func(*ledger.Record) protocol.Params
	// Wrap, when set, wraps the client's executor of every request, the
	// baseline's and the ladder's (the daemon tracks its requests in
	// flight with it).
	Wrap func(dispatch.Exec) dispatch.Exec
}

// Plan is a target's run, assembled from its validated description in one
// call: what the probe and ladder commands, the daemon's baseline streams
// and ladders, and /probe execute. It is the one place a configured target
// becomes a client, classes, prompt streams, executors (with cancellation
// injection for the baseline, first-token marking for the ladder), a
// retry and backoff policy, a budget, a ladder and a server-metrics
// reader.
type Plan struct {
	Target   config.Target
	Client   *protocol.Client
	Endpoint protocol.Target // what the client sends to
	Classes  []workload.Class
	Boundary ledger.TTFTBoundary // what TTFT measures to (ttft_boundary)
	Retry    dispatch.Retry      // retries.* (off when max_attempts ≤ 1)
	Backoff  dispatch.Backoff    // the wait after failures
	Validity verdict.ValidityConfig
	// Budget is the daily budget (budget.*); Limited is false when it sets
	// no limit.
	Budget  budget.Limits
	Limited bool
	// Ladder and Schedule are the target's ladder and its timetable when
	// it has one (HasLadder): Target, Classes, the gates, abort rules and
	// the server-metrics reader are filled; the caller adds Admit,
	// Progress and Now.
	Ladder    ladder.Config
	Schedule  ladder.Schedule
	HasLadder bool
	// FleetSteps are the ladder's rates for the whole fleet (Ladder.Steps
	// are this shard's share of each; the same alone).
	FleetSteps []float64
	// ServerMetrics reads the target's own metrics endpoint
	// (server_metrics.url), or is nil.
	ServerMetrics ladder.ServerMetrics

	params     []func(*ledger.Record) protocol.Params // one prompt stream per class
	injections []dispatch.Injection                   // per class; Fraction 0 when off
	sessions   []*classSession                        // per class; nil without a session
	wrap       func(dispatch.Exec) dispatch.Exec
}

// NewPlan assembles a validated target's run (in a fleet, this shard's
// share of it). The caller closes the plan
// (its client's idle connections) when the run ends.
func NewPlan(t config.Target, o PlanOptions) (_ *Plan, err error) {
	t = ForShard(t, o.Shard)
	client, endpoint, err := Client(t, o.Client)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			client.CloseIdleConnections()
		}
	}()
	p := &Plan{Target: t, Client: client, Endpoint: endpoint, Backoff: Backoff(t), Validity: Validity(t.Ladder), wrap: o.Wrap}
	if p.wrap == nil {
		p.wrap = func(e dispatch.Exec) dispatch.Exec { return e }
	}
	p.Boundary = t.TTFTBoundary // read and checked by ledger.TTFTBoundary as it was loaded
	if p.Classes, err = Classes(t, o.Index); err != nil {
		return nil, err
	}
	for i, c := range p.Classes {
		m, err := Mix(t, c, MixIndex(t, i)) // a cold twin draws its class's lengths
		if err != nil {
			return nil, err
		}
		params := paramsOf(t, m)
		cs, err := newClassSession(t, configClass(t, c.Name), c, m, i)
		if err != nil {
			return nil, err
		}
		p.sessions = append(p.sessions, cs)
		if cs != nil {
			params = sessionParams(t, cs, params)
		}
		if o.Params != nil {
			params = o.Params(params)
		}
		p.params = append(p.params, params)
		in, _ := Injection(t, i)
		if in.Fraction > 0 {
			if err := in.Validate(); err != nil {
				return nil, fmt.Errorf("cancellation: %w", err)
			}
		}
		p.injections = append(p.injections, in)
	}
	if p.Retry, err = Retry(t); err != nil {
		return nil, err
	}
	if p.Budget, p.Limited, err = Budget(t); err != nil {
		return nil, err
	}
	if p.ServerMetrics, err = ServerMetrics(t, client); err != nil {
		return nil, fmt.Errorf("server_metrics: %w", err)
	}
	if t.Ladder.Enabled || o.Ladder {
		if p.Ladder, p.Schedule, err = Ladder(t, o.Limits); err != nil {
			return nil, err
		}
		p.Ladder.ServerMetrics = p.ServerMetrics
		p.FleetSteps = p.Ladder.Steps
		if o.Shard.InFleet() {
			p.Ladder.Steps = o.Shard.Rates(p.Ladder.Steps)
		}
		p.Ladder.ExecMarksFirstToken = true // LadderExec marks first tokens
		p.HasLadder = true
	}
	return p, nil
}

// paramsOf draws a class's requests from its mix, with the target's model.
func paramsOf(t config.Target, m *workload.Mix) func(*ledger.Record) protocol.Params {
	model, deltas := t.Model, t.UsageDeltas
	return func(*ledger.Record) protocol.Params {
		prm := m.Next().Params
		prm.Model = model
		prm.UsageDeltas = deltas
		return prm
	}
}

// Close releases the plan's idle connections.
func (p *Plan) Close() { p.Client.CloseIdleConnections() }

// Params is class i's prompt source.
func (p *Plan) Params(i int) func(*ledger.Record) protocol.Params { return p.params[i] }

// ExecWith sends requests drawn from params through the plan's client,
// stamped by now (the clock of the ledger they fill), with the plan's
// wrapper (a /probe scrape of a configured target draws its own prompts).
func (p *Plan) ExecWith(params func(*ledger.Record) protocol.Params, now func() time.Duration) dispatch.Exec {
	return p.wrap(p.Client.Exec(p.Endpoint, params, now))
}

// Exec is class i's baseline (or probe) executor: the client with its
// prompts, and cancellation injection when cancellation.fraction is set
// (ladders run without it).
func (p *Plan) Exec(i int, now func() time.Duration) dispatch.Exec {
	e := p.ExecWith(p.params[i], now)
	if cs := p.sessions[i]; cs != nil {
		e = cs.replied(e)
	}
	if p.injections[i].Fraction > 0 {
		e, _ = dispatch.Inject(p.injections[i], e) // validated by NewPlan
	}
	return e
}

// LadderExec is the ladder's executor, the only one: it routes a request
// to its class's prompts (the ladder assigns the class when it plans the
// arrival; an unknown class draws from the first) and tells the runner
// when the first token arrived (ladder.FirstTokenFunc), so a request still
// waiting for one past the in-step TTFT limit counts against the step
// before it finishes.
func (p *Plan) LadderExec(now func() time.Duration) dispatch.Exec {
	anyToken := p.Boundary == ledger.TTFTAnyToken
	execs := make(map[string]dispatch.Exec, len(p.Classes))
	for i, c := range p.Classes {
		params := p.params[i]
		execs[c.Name] = p.wrap(func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
			t := p.Endpoint
			if mark := ladder.FirstTokenFunc(ctx); mark != nil {
				t.Adapter = protocol.ObserveFirstToken(t.Adapter, anyToken, mark)
			}
			return p.Client.Do(ctx, t, params(rec), rec, now, dispatched)
		})
	}
	first := execs[p.Classes[0].Name]
	return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		e, ok := execs[rec.Class]
		if !ok {
			e = first
		}
		return e(ctx, rec, dispatched)
	}
}

// BaselinePlan is class i's baseline stream (baseline.rate split by class
// weight).
// A session class's stream starts sessions (Plan.Session).
func (p *Plan) BaselinePlan(i int) (BaselinePlan, error) {
	bp, err := Baseline(p.Target, p.Classes, i)
	bp.Open.Session = p.Session(i)
	return bp, err
}
