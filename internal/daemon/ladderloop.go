package daemon

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// ladderLoop runs the ladder on its timetable, or at once on an identity
// change. A ladder with neither every nor daily set (allowed with
// run_on_identity_change) waits for identity changes only.
func (r *targetRun) ladderLoop(ctx context.Context, d *Daemon) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	if r.fleet != nil && !d.node.Identity().Coordinator() {
		r.followLoop(ctx)
		return
	}
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
			next, err := r.nextTimed(d.now()) // spread over the period (ladderspread.go)
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
		if !r.awaitSettled(ctx, d, trigger) {
			return
		}
		release, err := r.takeTurn(ctx, d, trigger) // limits.max_concurrent_ladders (ladderturns.go)
		if err != nil {
			return
		}
		r.state.ladderSpan.begin(d.led.Now())
		r.logLadderStart(d, trigger)
		res, err := r.runLadder(ctx, trigger)
		release()
		// Also when interrupted: its requests may still be in flight.
		r.state.ladderSpan.end(d.led.Now(), r.baselineSettle())
		r.state.settle.ended(d.led.Now())
		r.setLaddering("")
		if err != nil && ctx.Err() == nil {
			d.log.Error("ladder", "target", r.name, "err", err)
		}
		r.logLadderEnd(d, res, ctx.Err() != nil)
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
			if v := p.Row; v != nil && !v.Summary.Validity.Valid {
				d.log.Warn("ladder step invalid: not used for capacity or knee", "target", r.name, "step", p.Step, "rate", p.Rate,
					"causes", strings.Join(v.Summary.Validity.CauseNames(), ","), "reasons", strings.Join(v.Summary.Validity.Reasons(), "; "))
			}
			return
		}
		r.setLaddering(fmt.Sprintf("ladder step %d/%d at %s req/s", p.Step, p.Steps, durfmt.Rate(p.Rate)))
		shares := workload.Weights(r.classes).Split(p.Rate)
		for i, c := range r.classes {
			d.rec.SetArrivalRate(r.name, c.Name, ledger.TrafficLadder, shares[i])
		}
	}
}

func (r *targetRun) setLaddering(s string) {
	r.mu.Lock()
	r.laddering = s
	r.mu.Unlock()
}
