package daemon

import (
	"time"

	"github.com/llmprobe/llmprobe/internal/budget"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/statuspage"
)

// The target's facts for the status page, typed: the page (statuspage)
// writes every word.

// trackProgress wraps the ladder's progress callback: it keeps the step
// running now for the status page, then calls next.
func (r *targetRun) trackProgress(now func() time.Time, next func(ladder.Progress)) func(ladder.Progress) {
	return func(p ladder.Progress) {
		if p.Phase != "done" {
			r.mu.Lock()
			if r.step.Step != p.Step || r.step.Steps != p.Steps {
				r.step = statuspage.LadderProgress{Step: p.Step, Steps: p.Steps, Rate: p.Rate, StepStarted: now().Add(-p.Elapsed)}
			}
			r.mu.Unlock()
		}
		next(p)
	}
}

// ladderFact is the ladder running now (nil: none).
func (r *targetRun) ladderFact() *statuspage.LadderProgress {
	_, _, _, running := r.state.ladderSpan.snapshot()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !running || r.step.Step == 0 {
		return nil
	}
	p := r.step
	p.StepDuration, p.Settle = r.cfg.Ladder.StepDuration.D(), r.baselineSettle()
	return &p
}

// heldFact is the baseline planned during ladders; start is the ledger's
// epoch (its offsets become wall times).
func (r *targetRun) heldFact(start time.Time) statuspage.Held {
	none, during, until, running := r.state.ladderSpan.snapshot()
	h := statuspage.Held{Outside: none, During: during, Running: running}
	if until > 0 {
		h.Until = start.Add(until)
	}
	return h
}

// budgetFact is today's budget (nil without one).
func (r *targetRun) budgetFact() *budget.Remaining {
	if r.budget == nil {
		return nil
	}
	rem := r.budget.Remaining()
	return &rem
}

// nextLadder is when the next timed ladder runs (zero: none is timed).
func (r *targetRun) nextLadder(now time.Time) time.Time {
	if r.ladder == nil || (r.sched.Every <= 0 && r.sched.Daily == "") {
		return time.Time{}
	}
	next, err := r.nextTimed(now)
	if err != nil {
		return time.Time{}
	}
	return next
}

// classFacts are the target's classes with their TTFT gates.
func (r *targetRun) classFacts() []statuspage.ClassFacts {
	out := make([]statuspage.ClassFacts, 0, len(r.classes))
	for _, c := range r.classes {
		out = append(out, statuspage.ClassFacts{Name: c.Name, TTFT: c.Gates.TTFT})
	}
	return out
}
