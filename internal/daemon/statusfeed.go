package daemon

import (
	"fmt"
	"strings"

	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/statuspage"
)

// status feeds the status page: the daemon's view of every target, laid
// out by statuspage.Build.
func (d *Daemon) status() statuspage.Status {
	host := d.host.Recent()
	now := d.now()
	fleetStatus := d.node.Status()
	d.mu.Lock()
	defer d.mu.Unlock()
	in := statuspage.Input{Version: d.opts.Build.Version, Started: d.start, Now: now, LadderSVG: d.lastSVG, Fleet: fleetStatus, Host: host}
	for n, r := range d.targets {
		inflight, _ := r.state.flight.snapshot()
		t := statuspage.TargetInput{Name: n, API: r.cfg.API, Model: r.cfg.Model, InFlight: inflight, Activity: r.stateText(),
			Verdict: r.state.validity.Judge(now, host), Memory: r.state.status,
			LastOutcome: r.lastOutcome(), DuringLadder: r.duringText(d.start, d.led.Now()), Budget: r.budgetText(),
			Failures: d.failures(n, r.client.Redactor()), Settle: r.state.settle.waiting()}
		if res, ok := d.last[n]; ok {
			t.Last = &res
		}
		in.Targets = append(in.Targets, t)
	}
	return statuspage.Build(in)
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
	recs := d.ring.Target(target).Failures
	var out []statuspage.Failure
	for i := len(recs) - 1; i >= 0 && len(out) < statuspage.MaxFailures; i-- {
		rec := recs[i]
		at := rec.End
		if at == 0 {
			at = rec.Planned
		}
		out = append(out, statuspage.Failure{When: d.start.Add(at), Traffic: string(rec.Traffic), Class: red.String(rec.Class, 64),
			Outcome: string(rec.Outcome), Reason: string(rec.Reason), Status: rec.Status, Error: red.String(rec.Error, ledger.MaxErrorBytes)})
	}
	return out
}

// ladderServerLog is the per-step server explanations of a ladder for its
// end log line ("" without server views).
func ladderServerLog(res ladder.Result) string {
	var parts []string
	for _, s := range res.Steps {
		if s.Server != nil {
			parts = append(parts, fmt.Sprintf("step %d (%s req/s): %s", s.Index, stats.FormatRate(s.Rate), s.Server.Explanation))
		}
	}
	return strings.Join(parts, " | ")
}
