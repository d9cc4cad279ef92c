package ladder

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// AbortRules stop a ladder early. Each is checked after every step and,
// all but OnGeneratorInvalid, about every ProgressEvery inside it (see
// Config.MidStepMin); a zero field turns its rule off. Inside a step the
// TTFT rule also counts requests still waiting for their first token past
// the limit, so an overloaded step stops within about the limit plus a
// check interval rather than after its window.
type AbortRules struct {
	// ErrorFraction: abort when failed requests (http_error, timeout,
	// transport_error, stream_error) exceed this fraction of those sent.
	ErrorFraction float64
	// RejectionFraction: abort when rejected (429/503) requests exceed this
	// fraction of those sent.
	RejectionFraction float64
	// TTFTGateMultiple: abort when the step's TTFT p95 exceeds this multiple
	// of the TTFT gate (the ladder's TTFT gate; see Config.TTFTGate).
	TTFTGateMultiple float64
	// OnUnsent: abort when unsent arrivals (client cap, budget, rate cap)
	// exceed UnsentFraction of those planned (0: any unsent arrival).
	OnUnsent       bool
	UnsentFraction float64
	// OnGeneratorInvalid: abort when the step's generator-validity verdict
	// is invalid (the load generator did not do what was asked).
	OnGeneratorInvalid bool
}

// Check applies the rules to one step's summary; ttftGate is the gate the
// TTFT multiple refers to (0: that rule is off). It returns why the ladder
// must stop, or "" to go on.
func (a AbortRules) Check(s stats.Summary, ttftGate time.Duration) string {
	failed := 0
	for _, o := range []ledger.Outcome{ledger.HTTPError, ledger.Timeout, ledger.TransportError, ledger.StreamError} {
		failed += s.Outcomes.ByOutcome[o]
	}
	if a.ErrorFraction > 0 && s.Dispatched > 0 {
		if f := float64(failed) / float64(s.Dispatched); f > a.ErrorFraction {
			return fmt.Sprintf("error fraction %.3f above %.3f", f, a.ErrorFraction)
		}
	}
	if a.RejectionFraction > 0 && s.Dispatched > 0 {
		if f := float64(s.Rejected) / float64(s.Dispatched); f > a.RejectionFraction {
			return fmt.Sprintf("rejection fraction %.3f above %.3f", f, a.RejectionFraction)
		}
	}
	if a.TTFTGateMultiple > 0 && ttftGate > 0 && s.TTFT.Count > 0 {
		if lim := time.Duration(a.TTFTGateMultiple * float64(ttftGate)); s.TTFT.P95 > lim {
			return fmt.Sprintf("TTFT p95 %s above %g × gate %s", durfmt.Format(s.TTFT.P95), a.TTFTGateMultiple, durfmt.Format(ttftGate))
		}
	}
	if a.OnUnsent && s.Planned > 0 && s.Unsent > 0 {
		if f := float64(s.Unsent) / float64(s.Planned); f > a.UnsentFraction {
			return fmt.Sprintf(ReasonUnsent+" %.3f above %.3f (%d of %d planned)", f, a.UnsentFraction, s.Unsent, s.Planned)
		}
	}
	if a.OnGeneratorInvalid && !s.Validity.Valid {
		why := ReasonGeneratorInvalid
		if len(s.Validity.Causes) > 0 {
			why += ": " + s.Validity.Causes[0].Reason
		}
		return why
	}
	return ""
}

// Result is a ladder's result: the one model of a ladder and its verdicts
// (ladderresult.LadderResult), under the name the ladder's callers know. The
// runner produces it, a fleet's coordinator judges its merged steps into
// it (Conclude), internal/report renders it, and its JSON is what the
// history file stores and `ladder --json` prints.
type Result = ladderresult.LadderResult
