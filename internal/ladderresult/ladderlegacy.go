package ladderresult

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// The history line before schema_version (version 1): flat step rows
// (ttft_p50_s, …) and class gates in nanoseconds. Users keep history files
// for months, so these lines still decode: into the same LadderResult,
// with the figures the old line did not keep left zero (TTFT p90 and max,
// E2E p99, dispatch-lag percentiles but the p99, the host's health).

type legacyLadder struct {
	Target             string                 `json:"target"`
	Trigger            string                 `json:"trigger"`
	Started            time.Time              `json:"started"`
	Finished           time.Time              `json:"finished"`
	StepDuration       float64                `json:"step_duration_s"`
	GoodFractionTarget float64                `json:"good_fraction_target"`
	KneeFactor         float64                `json:"knee_factor"`
	Steps              []legacyStep           `json:"steps"`
	ClassGates         map[string]stats.Gates `json:"class_gates"` // nanoseconds
	Verdict
	Classes     []ClassVerdict `json:"classes"`
	Aborted     bool           `json:"aborted"`
	AbortReason string         `json:"abort_reason"`
	StopAt      string         `json:"stop_at"`
	Stopped     string         `json:"stopped"`
}

type legacyStep struct {
	Step         int                    `json:"step"`
	Rate         float64                `json:"rate"`
	AchievedRate float64                `json:"achieved_rate"`
	Planned      int                    `json:"planned"`
	Dispatched   int                    `json:"dispatched"`
	Unsent       int                    `json:"unsent"`
	OK           int                    `json:"ok"`
	Good         int                    `json:"good"`
	Pending      int                    `json:"pending"`
	Outcomes     map[string]int         `json:"outcomes"`
	GoodFraction float64                `json:"good_fraction"`
	Goodput      float64                `json:"goodput"`
	TTFTCount    int                    `json:"ttft_count"`
	TTFTP50      float64                `json:"ttft_p50_s"`
	TTFTP95      float64                `json:"ttft_p95_s"`
	TTFTP99      float64                `json:"ttft_p99_s"`
	E2EP50       float64                `json:"e2e_p50_s"`
	E2EP95       float64                `json:"e2e_p95_s"`
	DispatchLag  float64                `json:"dispatch_lag_p99_s"`
	Valid        bool                   `json:"valid"`
	Invalid      []string               `json:"invalid_reasons"`
	Causes       []verdict.InvalidCause `json:"invalid_causes"`
	Steady       *verdict.Steady        `json:"steady"`
	AbortReason  string                 `json:"abort_reason"`
	Classes      []legacyClass          `json:"classes"`
	Server       *servermetrics.View    `json:"server"`
}

type legacyClass struct {
	Class        string  `json:"class"`
	Rate         float64 `json:"rate"`
	Planned      int     `json:"planned"`
	OK           int     `json:"ok"`
	Good         int     `json:"good"`
	Pending      int     `json:"pending"`
	GoodFraction float64 `json:"good_fraction"`
	Goodput      float64 `json:"goodput"`
	TTFTCount    int     `json:"ttft_count"`
	TTFTP95      float64 `json:"ttft_p95_s"`
}

// decodeLegacy reads a version 1 history line into r.
func (r *LadderResult) decodeLegacy(b []byte) error {
	var l legacyLadder
	if err := json.Unmarshal(b, &l); err != nil {
		return fmt.Errorf("ladder result (flat history line): %w", err)
	}
	*r = LadderResult{
		Target: l.Target, Trigger: l.Trigger, Started: l.Started, Finished: l.Finished, StepDuration: secs(l.StepDuration),
		ClassGates: l.ClassGates, GoodFractionTarget: l.GoodFractionTarget, KneeFactor: l.KneeFactor,
		Verdict: l.Verdict, Classes: l.Classes, Aborted: l.Aborted, AbortReason: l.AbortReason, StopAt: l.StopAt, Stopped: l.Stopped,
	}
	for _, ls := range l.Steps {
		r.Steps = append(r.Steps, ls.step(r.StepDuration))
	}
	return nil
}

func (ls legacyStep) step(window time.Duration) LadderStep {
	causes := ls.Causes
	if len(causes) == 0 { // a line older than invalid_causes: its reasons, unnamed
		for _, why := range ls.Invalid {
			causes = append(causes, verdict.InvalidCause{Reason: why})
		}
	}
	s := stats.Summary{
		Mode: ledger.ModeOpen, RequestedRate: ls.Rate, Window: window, Planned: ls.Planned, Pending: ls.Pending,
		Attempts: ls.Planned, Dispatched: ls.Dispatched, Unsent: ls.Unsent, Completed: ls.OK, Good: ls.Good,
		Outcomes:     stats.Outcomes{ByOutcome: map[ledger.Outcome]int{}},
		AchievedRate: ls.AchievedRate, GoodputPerSecond: ls.Goodput, GoodFraction: ls.GoodFraction,
		TTFT:        quantile.Percentiles{Count: ls.TTFTCount, P50: secs(ls.TTFTP50), P95: secs(ls.TTFTP95), P99: secs(ls.TTFTP99)},
		E2E:         quantile.Percentiles{Count: ls.OK, P50: secs(ls.E2EP50), P95: secs(ls.E2EP95)}, // over every ok record: the line kept no E2E count
		DispatchLag: quantile.Percentiles{Count: ls.Dispatched, P99: secs(ls.DispatchLag)},
		Validity:    verdict.Validity{Valid: ls.Valid, Causes: causes},
		Steady:      ls.Steady,
	}
	for o, n := range ls.Outcomes {
		s.Outcomes.ByOutcome[ledger.Outcome(o)] = n
	}
	s.Rejected, s.Censored, s.Cancelled = s.Outcomes.ByOutcome[ledger.Rejected], s.Outcomes.ByOutcome[ledger.Censored], s.Outcomes.ByOutcome[ledger.Cancelled]
	st := LadderStep{Index: ls.Step, Rate: ls.Rate, Summary: s, Aborted: ls.AbortReason != "", AbortReason: ls.AbortReason, Server: ls.Server}
	for _, c := range ls.Classes {
		st.Classes = append(st.Classes, ClassStep{Class: c.Class, Rate: c.Rate, Summary: stats.Summary{
			Mode: ledger.ModeOpen, RequestedRate: c.Rate, Window: window, Planned: c.Planned, Pending: c.Pending,
			Completed: c.OK, Good: c.Good, GoodFraction: c.GoodFraction, GoodputPerSecond: c.Goodput,
			TTFT: quantile.Percentiles{Count: c.TTFTCount, P95: secs(c.TTFTP95)}, Validity: s.Validity, Steady: s.Steady,
		}})
	}
	return st
}
