package ladder

import (
	"fmt"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// stopHere says why the ladder must not offer another step after steps
// (the steps run so far, none aborted), or "" to go on: the first failing
// step (see firstFailing) ends the climb at once, or one step later with
// StopAtTop; with StopAtKnee the knee step ends it too.
func stopHere(steps []ladderresult.LadderStep, cfg Config) string {
	n := len(steps)
	failed := firstFailing(steps, cfg.GoodFractionTarget)
	if failed > 0 && n >= failed+cfg.StopAt.stepsPastFailure() {
		if n == failed {
			return fmt.Sprintf("stop_at %s: step %d %s", cfg.StopAt, steps[failed-1].Index, failedWhy(steps[failed-1], cfg.GoodFractionTarget))
		}
		return fmt.Sprintf("stop_at %s: step %d is one past step %d, the first that failed its gates", cfg.StopAt, steps[n-1].Index, steps[failed-1].Index)
	}
	if cfg.StopAt == StopAtKnee {
		if v := ladderresult.Judge(steps, cfg.GoodFractionTarget, cfg.KneeFactor); v.KneeStep > 0 {
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
func firstFailing(steps []ladderresult.LadderStep, target float64) int {
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
			js = append(js, judged{"", stats.Qualifies(s.Summary, target)})
		}
		for _, c := range s.Classes {
			// A class with no arrivals in the step says nothing; one whose
			// arrivals were all still in flight when the step was summarised
			// (pending) had arrivals, none good: judged as stats.Qualifies judges.
			if c.Summary.Planned+c.Summary.Pending > 0 {
				js = append(js, judged{c.Class, stats.Qualifies(c.Summary, target)})
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
