package daemon

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/budget"
	"github.com/llmprobe/llmprobe/internal/ledger"
)

func (r *targetRun) stateText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.laddering != "" {
		return r.laddering
	}
	if r.budget != nil {
		if rem := r.budget.Remaining(); (rem.TokensLimited && rem.Tokens <= 0) || (rem.RequestsLimited && rem.Requests <= 0) {
			return "budget spent until " + rem.ResetAt.Format(time.RFC3339)
		}
	}
	return "probing"
}

// duringText is the status page's account of the target's baseline requests
// planned during ladders (labelled during="ladder", not in the SLO). start
// is the ledger's epoch, now its current offset.
func (r *targetRun) duringText(start time.Time, now time.Duration) string {
	none, during, until, running := r.state.ladderSpan.snapshot()
	txt := fmt.Sprintf("%d of %d baseline requests", during, none+during)
	switch {
	case running:
		txt += "; labelled during=\"ladder\" now (a ladder is running)"
	case until > now:
		txt += "; labelled during=\"ladder\" until " + start.Add(until).UTC().Format(time.RFC3339) + " (settle)"
	}
	return txt
}

// budgetText is today's spend split by use ("" without a budget).
func (r *targetRun) budgetText() string {
	if r.budget == nil {
		return ""
	}
	rem := r.budget.Remaining()
	sp := func(u budget.Use) budget.Spend { return rem.ByUse[u] }
	base := sp(budget.Use{Traffic: ledger.TrafficBaseline, During: ledger.DuringNone.Label()})
	dur := sp(budget.Use{Traffic: ledger.TrafficBaseline, During: ledger.DuringLadder.Label()})
	lad := sp(budget.Use{Traffic: ledger.TrafficLadder, During: ledger.DuringLadder.Label()})
	prb := sp(budget.Use{Traffic: ledger.TrafficProbe, During: ledger.DuringNone.Label()}) // /probe scrapes
	txt := fmt.Sprintf("%d requests, %d tokens: baseline %d/%d, baseline during ladders %d/%d, ladders %d/%d, /probe %d/%d (requests/tokens)",
		rem.RequestsUsed, rem.TokensUsed, base.Requests, base.Tokens, dur.Requests, dur.Tokens, lad.Requests, lad.Tokens, prb.Requests, prb.Tokens)
	if rem.InvalidUsage > 0 {
		txt += fmt.Sprintf("; %d answers reported impossible usage and were charged their upper bound (prompt estimate + max tokens)", rem.InvalidUsage)
	}
	return txt
}

func (r *targetRun) lastOutcome() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lastOut == "" {
		return "none yet"
	}
	return string(r.lastOut) + "/" + string(r.lastRsn)
}
