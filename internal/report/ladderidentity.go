package report

import (
	"fmt"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
)

// ladderIdentityLine names the identity a ladder was measured on ("" when
// unknown).
func ladderIdentityLine(res ladderresult.LadderResult) string {
	if res.Identity.IsZero() {
		return ""
	}
	return fmt.Sprintf("identity: %s (when the ladder began; its capacity belongs to it)\n", res.Identity)
}

// ladderPartialLine says that a deploy or restart cut the ladder: its
// steps before the cut stand for the old identity only, as a lower bound
// ("" for a complete ladder).
func ladderPartialLine(res ladderresult.LadderResult) string {
	if res.Complete() {
		return ""
	}
	what := "the target restarted during it"
	if res.Partial == cause.IdentityChanged {
		what = "the target's identity changed during it"
		if !res.ChangedTo.IsZero() {
			what += " (to " + res.ChangedTo.String() + ")"
		}
	}
	return fmt.Sprintf("PARTIAL ladder (%s): %s; the steps before stand for %s only, their capacity is a LOWER BOUND of it, and this ladder gives no capacity for what came after\n",
		res.Partial, what, identityOrUnknown(res.Identity))
}

func identityOrUnknown(i ladderresult.Identity) string {
	if i.IsZero() {
		return "the identity it began on"
	}
	return i.String()
}
