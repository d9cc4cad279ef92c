package ladder

import (
	"context"
	"fmt"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/servermetrics/scrape"
)

// serverQueue is the server's waiting queue at a step's start and at the
// end of its arrivals (ok false when not read).
type serverQueue struct {
	start, end float64
	ok         bool
}

// markQueue reads the server's waiting queue as the step's arrivals end:
// the steady-state rule compares it with the step's start (the view's own
// end scrape comes after the settle, when the queue has drained).
func markQueue(ctx context.Context, srv scrape.Session) serverQueue {
	start, end, ok := srv.Mark(context.WithoutCancel(ctx))
	return serverQueue{start: start, end: end, ok: ok}
}

// judgeSteady completes a step's saturation verdict with the server's
// queue and gives it to every class: one target, one queue, so a
// saturated step is saturated for each class (as its generator's validity
// is every class's).
func judgeSteady(ls *ladderresult.LadderStep, q serverQueue) {
	s := ls.Summary.Steady
	if s == nil {
		return
	}
	if q.ok {
		v := s.WithServer(q.start, q.end)
		ls.Summary.Steady = &v
	}
	for i := range ls.Classes {
		ls.Classes[i].Summary.Steady = ls.Summary.Steady
	}
}

// failedWhy says how a failing step failed: its gates, or its steady state
// (a saturated step fails whatever its good fraction).
func failedWhy(s ladderresult.LadderStep, target float64) string {
	if st := s.Summary.Steady; st != nil && st.Saturated && s.Summary.GoodFraction >= target {
		return "was " + st.Reason
	}
	return fmt.Sprintf("failed its gates (good fraction below %g)", target)
}
