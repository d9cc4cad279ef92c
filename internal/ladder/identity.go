package ladder

import (
	"fmt"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
)

// A ladder belongs to one identity: the one it began on (Run, Begin). When
// the target's identity changes, or the target refuses connections (a
// restart), the step running is stopped at once and is invalid with the
// cause (identity_changed, target_restarted); the steps before it stand as
// a partial result of the old identity, whose capacity is a lower bound
// (Result.Partial). docs/ladder.md, "A deploy during a ladder".

// restartReason is the abort reason of a step the target refused
// connections in.
const restartReason = "target restarted: it refused connections (nothing listening)"

func identityReason(from, to ladderresult.Identity) string {
	return fmt.Sprintf("identity changed: %s → %s", from, to)
}

// identityNow is the target's identity as last seen (zero when not
// watched or unknown).
func (r *Runner) identityNow() ladderresult.Identity {
	if r.cfg.Identity == nil {
		return ladderresult.Identity{}
	}
	return r.cfg.Identity()
}

// identityMoved reports the identity now and whether it differs from the
// one the ladder began on; an identity unknown at either end is no change.
func (r *Runner) identityMoved() (ladderresult.Identity, bool) {
	now := r.identityNow()
	return now, !r.ident.IsZero() && !now.IsZero() && now != r.ident
}

// cutStep records the step's identity at its start and end and, when the
// target restarted or changed identity during it, makes it invalid with
// that cause and an abort: it measured no one running deployment.
func (r *Runner) cutStep(ls *ladderresult.LadderStep, st *stepState, start ladderresult.Identity) {
	ls.IdentityStart, ls.IdentityEnd = start, r.identityNow()
	if r.ident.IsZero() {
		// Unknown when the ladder began (a one-shot ladder learns the model
		// from its first answers): the identity first seen is the one it
		// measures, and a change after it cuts the ladder.
		r.ident = ls.IdentityEnd
	}
	st.mu.Lock()
	refused := st.refused
	st.mu.Unlock()
	why := ""
	if refused > 0 {
		why = restartReason
		ls.Cut(cause.TargetRestarted, fmt.Sprintf("the target refused %d of the step's requests (nothing listening): it restarted during the step", refused))
	}
	if to, moved := r.identityMoved(); moved {
		why = identityReason(r.ident, to)
		ls.Cut(cause.IdentityChanged, fmt.Sprintf("the target's identity changed during the step: %s → %s", r.ident, to))
	}
	if why != "" && !ls.Aborted {
		ls.Aborted, ls.AbortReason = true, why
	}
}

// concludePartial makes a partial ladder's capacities lower bounds and
// says why it ended, when no step's abort did.
func concludePartial(res *Result) {
	if res.Partial == "" {
		return
	}
	ladderresult.LowerAll(&res.Verdict, res.Classes)
	if !res.Aborted {
		res.Aborted = true
		res.AbortReason = fmt.Sprintf("after step %d: %s", len(res.Steps), identityReason(res.Identity, res.ChangedTo))
	}
}
