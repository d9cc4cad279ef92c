package daemon

import (
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/statuspage"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// status feeds the status page: the daemon's view of every target, laid
// out by statuspage.Build.
func (d *Daemon) status() statuspage.Status { return d.statusOf("") }

// statusOf is the view of the target named name alone ("": of every
// target), what /targets/NAME renders without judging the others.
func (d *Daemon) statusOf(name string) statuspage.Status {
	host := d.host.Recent()
	now := d.now()
	fleetStatus := d.node.Status()
	d.mu.Lock()
	defer d.mu.Unlock()
	in := statuspage.Input{Version: d.opts.Build.Version, Started: d.start, Now: now, LadderSVG: d.lastSVG, Fleet: fleetStatus, Host: host}
	for _, r := range d.targets {
		if name != "" && r.name != name {
			continue
		}
		t := d.targetInput(r, now, host)
		if res, ok := d.last[r.name]; ok {
			t.Last = &res
		}
		in.Targets = append(in.Targets, t)
	}
	return statuspage.Build(in)
}

// targetInput is what the daemon knows of one target now, as typed facts
// (the page and the state log write the words); Last is the caller's.
func (d *Daemon) targetInput(r *targetRun, now time.Time, host verdict.HostHealth) statuspage.TargetInput {
	inflight, _ := r.state.flight.snapshot()
	r.mu.Lock()
	lastOut, lastRsn := r.lastOut, r.lastRsn
	r.mu.Unlock()
	t := statuspage.TargetInput{Name: r.name, API: r.cfg.API, Model: r.cfg.Model, InFlight: inflight, Ladder: r.ladderFact(),
		Verdict: r.state.validity.Judge(now, host), Memory: r.state.status, NextLadder: r.nextLadder(now),
		LastOutcome: lastOut, LastReason: lastRsn, Held: r.heldFact(d.start), Budget: r.budgetFact(),
		Configured: statuspage.Configured{BaselineOff: !r.cfg.Baseline.Enabled || r.cfg.Baseline.Rate <= 0, BaselineRate: r.cfg.Baseline.Rate, Ladder: r.ladder != nil},
		Classes:    r.classFacts(), Settle: r.state.settle.waiting(), Queued: r.queuedFact(d), Labels: r.cfg.Labels,
		Answers: r.state.checks.answers(now)}
	if r.client != nil {
		t.Failures = d.failures(r.name, r.client.Redactor())
	}
	return t
}

// gates are the gates of the target's class named class (none for an
// unknown class).
func (r *targetRun) gates(class string) stats.Gates {
	for _, c := range r.classes {
		if c.Name == class {
			return c.Gates
		}
	}
	return stats.Gates{}
}

// failures are the target's last failed requests from the ring, newest
// first, every text cleaned again by the one rule.
func (d *Daemon) failures(target string, red *sanitize.Redactor) []statuspage.Failure {
	if d.ring == nil {
		return nil
	}
	var out []statuspage.Failure
	for _, rec := range d.ring.LastFailures(target, statuspage.MaxFailures) {
		at := rec.End
		if at == 0 {
			at = rec.Planned
		}
		out = append(out, statuspage.Failure{When: d.start.Add(at), Traffic: string(rec.Traffic), Class: red.String(rec.Class, 64),
			Outcome: string(rec.Outcome), Reason: string(rec.Reason), Status: rec.Status, Error: red.String(rec.Error, ledger.MaxErrorBytes)})
	}
	return out
}
