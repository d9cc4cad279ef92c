package fleet

import (
	"fmt"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
)

// A fleet's ladder belongs to one identity as a lone prober's does
// (docs/ladder.md, "A deploy during a ladder"): a shard that sees the
// target's identity change, or the target refuse connections, stops its
// share at once, and its abort ends the step for every shard (a shard's
// own abort aborts the fleet's ladder); the merged step is invalid with
// that shard's cause, and the ladder is a partial result of the identity
// it began on (ladder.Conclude makes its capacity a lower bound).

// identityNow is the target's identity as the coordinator last saw it.
func identityNow(cfg ladder.Config) ladderresult.Identity {
	if cfg.Identity == nil {
		return ladderresult.Identity{}
	}
	return cfg.Identity()
}

// cut records the merged step's identities (the coordinator's, at the
// step's start and once gathered) and, when a shard's share met a deploy
// or a restart or the coordinator saw the identity move from the
// ladder's (began), makes the step invalid with that cause.
func cut(ls *ladderresult.LadderStep, g gathered, shards int, began, start, end ladderresult.Identity) {
	ls.IdentityStart, ls.IdentityEnd = start, end
	for s := range shards {
		r, ok := g.reports[s]
		if !ok {
			continue
		}
		for _, c := range r.Causes {
			if c.Cause == cause.IdentityChanged || c.Cause == cause.TargetRestarted {
				ls.Cut(c.Cause, fmt.Sprintf("shard %d: %s", s, c.Reason))
			}
		}
	}
	if !began.IsZero() && !end.IsZero() && end != began {
		ls.Cut(cause.IdentityChanged, fmt.Sprintf("the target's identity changed during the step: %s → %s", began, end))
	}
	if c := ls.CutCause(); c != "" && !ls.Aborted {
		ls.Aborted, ls.AbortReason = true, fmt.Sprintf("%s during the step", c)
	}
}
