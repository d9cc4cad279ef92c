package daemon

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmprobe/llmprobe/internal/budget"
	"github.com/llmprobe/llmprobe/internal/statuspage"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// validityWindow is how far back the live generator verdict looks.
const validityWindow = time.Minute

// targetState is what a target keeps across reloads: the requests it has in
// flight (started by any generation of its streams), the generator-validity
// window, the daily budget and the identity last seen. A reload must not
// reset any of them.
type targetState struct {
	flight *flightSet
	// validity is the live generator-validity window (the one rule,
	// verdict.ValidityConfig.Judge, with the target's ladder thresholds,
	// held invalid until a clean window).
	validity *verdict.LiveValidity
	// budget is set the first time a configuration gives the target a
	// budget and kept from then on; every finished record is charged to
	// it, so that spend and admissions stay right across reloads that
	// remove and restore the budget.
	budget atomic.Pointer[budget.Budget]
	// startLadderDone is set once the run_on_start ladder was triggered, so
	// a reload does not start another.
	startLadderDone atomic.Bool
	// ladderSpan labels baseline arrivals planned during a ladder.
	ladderSpan ladderSpan
	// settle is what the wait before a ladder reads (laddersettle.go).
	settle settleWatch
	// failures turns baseline outcomes into failing/recovered log lines.
	failures failureLog
	// usageLog says when a response's impossible usage was charged its
	// bound (usagebound.go).
	usageLog usageLog
	// status is what the status page keeps: recent baseline figures,
	// the last ladders, identity changes (statusdata.go).
	status *statuspage.Memory
	// checks tallies the answer checks for the status page (checktally.go).
	checks checkTally
	// stateLog is the target state last logged (targetstate.go).
	stateLog stateLog

	mu           sync.Mutex
	model        string // from responses
	version      string // from the configured response header / models field
	versionKnown bool   // the first identity poll was attempted (or none is configured)
}

func newTargetState() *targetState {
	return &targetState{flight: newFlightSet(), validity: verdict.NewLiveValidity(validityWindow, verdict.ValidityConfig{}), status: statuspage.NewMemory()}
}

// observeIdentity merges what one source saw into the target's identity and
// reports the identity to publish: ok is false while it is still
// incomplete (no model seen yet, or the first poll of the configured
// version source has not been attempted), so that the first sighting is
// never counted as a change.
func (s *targetState) observeIdentity(model string, version *string, polled bool) (m, v string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if model != "" {
		s.model = model
	}
	if version != nil {
		s.version = *version
	}
	if polled {
		s.versionKnown = true
	}
	return s.model, s.version, s.model != "" && s.versionKnown
}
