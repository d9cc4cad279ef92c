package ladderresult

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// LadderSchemaVersion is the version of a ladder result's JSON
// (schema_version): what `ladder --json` prints and each history line
// holds. Version 1 is the flat history line written before it
// (ttft_p50_s, …; no schema_version), which UnmarshalJSON still reads
// (ladderlegacy.go). Documented in docs/ladder.md, "Result schema".
const LadderSchemaVersion = 2

// ladderKind is the kind of every ladder result line.
const ladderKind = "ladder"

// ladderJSON is the wire form of a LadderResult. Figures derived from the
// steps (invalid_steps, saturated_steps, ttft_boundary; a step's
// invalid_reasons, met, saturated, planned_rate, ttft_gap) are written for
// readers and recomputed, not read, when decoding. gates is read back: it
// is the result's Gates when it has no class gates (with class gates, the
// gates they share, which reports then ignore).
type ladderJSON struct {
	SchemaVersion      int                  `json:"schema_version"`
	Kind               string               `json:"kind"` // always "ladder"
	Target             string               `json:"target"`
	Trigger            string               `json:"trigger,omitempty"`
	Started            *time.Time           `json:"started,omitempty"`
	Finished           *time.Time           `json:"finished,omitempty"`
	StepDuration       float64              `json:"step_duration_s,omitempty"`
	Steps              []stepJSON           `json:"steps"`
	Gates              *GatesJSON           `json:"gates,omitempty"`
	ClassGates         map[string]GatesJSON `json:"class_gates,omitempty"`
	TTFTBoundary       string               `json:"ttft_boundary,omitempty"`
	GoodFractionTarget float64              `json:"good_fraction_target"`
	KneeFactor         float64              `json:"knee_factor"`
	Verdict
	InvalidSteps   []int          `json:"invalid_steps"`
	SaturatedSteps []int          `json:"saturated_steps"`
	Classes        []ClassVerdict `json:"classes,omitempty"`
	Aborted        bool           `json:"aborted"`
	AbortReason    string         `json:"abort_reason,omitempty"`
	StopAt         string         `json:"stop_at,omitempty"`
	Stopped        string         `json:"stopped,omitempty"`
	Identity       *Identity      `json:"identity,omitempty"`
	Partial        cause.Cause    `json:"partial,omitempty"`
	ChangedTo      *Identity      `json:"identity_changed_to,omitempty"`
}

// stepJSON is the wire form of a LadderStep: its summary's figures in
// seconds, and its verdicts (valid, met, saturated).
type stepJSON struct {
	Index        int     `json:"index"`
	Rate         float64 `json:"rate"`          // offered req/s
	AchievedRate float64 `json:"achieved_rate"` // (first dispatched + pending) / window
	Planned      int     `json:"planned"`
	Pending      int     `json:"pending,omitempty"`
	PlannedRate  float64 `json:"planned_rate"`
	WindowS      float64 `json:"window_s,omitempty"`
	Retries      int     `json:"retries"`
	Dispatched   int     `json:"dispatched"`
	Unsent       int     `json:"unsent"`
	OK           int     `json:"ok"`
	Good         int     `json:"good"`
	// InjectedCancels are left out of the good fraction's denominator.
	InjectedCancels int                    `json:"injected_cancels,omitempty"`
	Outcomes        map[string]int         `json:"outcomes"`
	TTFT            DistJSON               `json:"ttft"`
	E2E             DistJSON               `json:"e2e"`
	DispatchLag     DistJSON               `json:"dispatch_lag"`
	Goodput         float64                `json:"goodput"`
	GoodFraction    float64                `json:"good_fraction"`
	Valid           bool                   `json:"valid"`
	InvalidReasons  []string               `json:"invalid_reasons"` // derived: invalid_causes[i].reason
	Causes          []verdict.InvalidCause `json:"invalid_causes"`
	Host            *HostJSON              `json:"host,omitempty"`
	Met             bool                   `json:"met"`
	Saturated       bool                   `json:"saturated"`
	Saturation      string                 `json:"saturation,omitempty"`
	Steady          *verdict.Steady        `json:"steady,omitempty"`
	Classes         []classStepJSON        `json:"classes,omitempty"`
	Aborted         bool                   `json:"aborted"`
	AbortReason     string                 `json:"abort_reason,omitempty"`
	Server          *servermetrics.View    `json:"server,omitempty"`
	TTFTGap         *servermetrics.TTFTGap `json:"ttft_gap,omitempty"`
	MatchedGaps     *MatchedGaps           `json:"matched_gaps,omitempty"`
	IdentityStart   *Identity              `json:"identity_start,omitempty"`
	IdentityEnd     *Identity              `json:"identity_end,omitempty"`
}

// classStepJSON is one class's share of a step.
type classStepJSON struct {
	Class        string   `json:"class"`
	Rate         float64  `json:"rate"` // the class's offered rate: step rate × its weight share
	Planned      int      `json:"planned"`
	Pending      int      `json:"pending,omitempty"`
	OK           int      `json:"ok"`
	Good         int      `json:"good"`
	GoodFraction float64  `json:"good_fraction"`
	Goodput      float64  `json:"goodput"`
	TTFT         DistJSON `json:"ttft"`
	Met          bool     `json:"met"`
}

// MarshalJSON writes the result in the current schema.
func (r LadderResult) MarshalJSON() ([]byte, error) {
	w := ladderJSON{
		SchemaVersion: LadderSchemaVersion, Kind: ladderKind, Target: r.Target, Trigger: r.Trigger,
		StepDuration: r.StepDuration.Seconds(), Steps: make([]stepJSON, 0, len(r.Steps)),
		TTFTBoundary: string(r.TTFTBoundary()), GoodFractionTarget: r.GoodFractionTarget, KneeFactor: r.KneeFactor,
		Verdict: r.Verdict, InvalidSteps: []int{}, SaturatedSteps: []int{}, Classes: r.Classes,
		Aborted: r.Aborted, AbortReason: r.AbortReason, StopAt: r.StopAt, Stopped: r.Stopped,
	}
	if !r.Started.IsZero() {
		w.Started = &r.Started
	}
	w.Identity, w.Partial, w.ChangedTo = identityPtr(r.Identity), r.Partial, identityPtr(r.ChangedTo)
	if !r.Finished.IsZero() {
		w.Finished = &r.Finished
	}
	for _, n := range r.InvalidSteps() {
		w.InvalidSteps = append(w.InvalidSteps, r.Steps[n-1].Index)
	}
	for _, n := range r.SaturatedSteps() {
		w.SaturatedSteps = append(w.SaturatedSteps, r.Steps[n-1].Index)
	}
	if g, ok := r.CommonGates(); ok {
		gj := GatesJSONOf(g)
		w.Gates = &gj
	}
	if len(r.ClassGates) > 0 {
		w.ClassGates = make(map[string]GatesJSON, len(r.ClassGates))
		for c, g := range r.ClassGates {
			w.ClassGates[c] = GatesJSONOf(g)
		}
	}
	for _, st := range r.Steps {
		w.Steps = append(w.Steps, stepOut(st, r.GoodFractionTarget))
	}
	return json.Marshal(w)
}

func stepOut(st LadderStep, target float64) stepJSON {
	s := st.Summary
	o := make(map[string]int, len(ledger.Outcomes))
	for _, oc := range ledger.Outcomes {
		o[string(oc)] = s.Outcomes.ByOutcome[oc]
	}
	js := stepJSON{
		Index: st.Index, Rate: st.Rate, AchievedRate: s.AchievedRate, Planned: s.Planned, Pending: s.Pending, PlannedRate: s.PlannedRate(),
		Retries: s.Retries, Dispatched: s.Dispatched, Unsent: s.Unsent, OK: s.Completed, Good: s.Good, InjectedCancels: s.InjectedCancels,
		Outcomes: o, TTFT: DistJSONOf(s.TTFT), E2E: DistJSONOf(s.E2E), DispatchLag: DistJSONOf(s.DispatchLag),
		Goodput: s.GoodputPerSecond, GoodFraction: s.GoodFraction, Valid: s.Validity.Valid,
		InvalidReasons: s.Validity.Reasons(), Causes: s.Validity.Causes, Host: HostJSONOf(s.Validity.Host),
		Met: stats.Qualifies(s, target), Aborted: st.Aborted, AbortReason: st.AbortReason, MatchedGaps: MatchedGapsOf(s),
	}
	if js.InvalidReasons == nil {
		js.InvalidReasons, js.Causes = []string{}, []verdict.InvalidCause{}
	}
	js.IdentityStart, js.IdentityEnd = identityPtr(st.IdentityStart), identityPtr(st.IdentityEnd)
	if s.WindowAsked > 0 {
		js.WindowS = s.Window.Seconds()
	}
	if s.Steady != nil {
		js.Steady, js.Saturated, js.Saturation = s.Steady, s.Steady.Saturated, s.Steady.Reason
	}
	if st.Server != nil {
		js.Server, js.TTFTGap = st.Server, st.TTFTGap()
	}
	if len(st.Classes) > 1 {
		for _, c := range st.Classes {
			cs := c.Summary
			js.Classes = append(js.Classes, classStepJSON{Class: c.Class, Rate: c.Rate, Planned: cs.Planned, Pending: cs.Pending, OK: cs.Completed,
				Good: cs.Good, GoodFraction: cs.GoodFraction, Goodput: cs.GoodputPerSecond, TTFT: DistJSONOf(cs.TTFT), Met: stats.Qualifies(cs, target)})
		}
	}
	return js
}

// errNotLadder is returned for a JSON object that is not a ladder result.
var errNotLadder = errors.New("not a ladder result")

// UnmarshalJSON reads a result of the current schema, or a history line
// of the older flat format (no schema_version: ladderlegacy.go). A newer
// schema than this build knows is refused rather than half read.
func (r *LadderResult) UnmarshalJSON(b []byte) error {
	var head struct {
		SchemaVersion int    `json:"schema_version"`
		Kind          string `json:"kind"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("ladder result: %w", err)
	}
	switch {
	case head.SchemaVersion > LadderSchemaVersion:
		return fmt.Errorf("ladder result: schema_version %d is newer than this build reads (%d)", head.SchemaVersion, LadderSchemaVersion)
	case head.SchemaVersion == 0 && head.Kind == ladderKind:
		return r.decodeLegacy(b)
	case head.SchemaVersion == 0 || head.Kind != ladderKind:
		return fmt.Errorf("ladder result: kind %q: %w", head.Kind, errNotLadder)
	}
	var w ladderJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("ladder result: %w", err)
	}
	*r = LadderResult{
		Target: w.Target, Trigger: w.Trigger, StepDuration: secs(w.StepDuration), GoodFractionTarget: w.GoodFractionTarget,
		KneeFactor: w.KneeFactor, Verdict: w.Verdict, Classes: w.Classes, Aborted: w.Aborted, AbortReason: w.AbortReason,
		StopAt: w.StopAt, Stopped: w.Stopped, Identity: identityOf(w.Identity), Partial: w.Partial, ChangedTo: identityOf(w.ChangedTo),
	}
	if w.Started != nil {
		r.Started = *w.Started
	}
	if w.Finished != nil {
		r.Finished = *w.Finished
	}
	if w.Gates != nil {
		r.Gates = w.Gates.Gates()
	}
	if len(w.ClassGates) > 0 {
		r.ClassGates = make(map[string]stats.Gates, len(w.ClassGates))
		for c, g := range w.ClassGates {
			r.ClassGates[c] = g.Gates()
		}
	}
	for _, js := range w.Steps {
		r.Steps = append(r.Steps, js.step(r.StepDuration, ledger.TTFTBoundary(w.TTFTBoundary)))
	}
	return nil
}

// step rebuilds a step's summary from its figures: what a report of the
// step reads (its table, notes, chart and JSON), not what only the run
// had (every distribution, reasons per outcome, gate misses).
func (js stepJSON) step(asked time.Duration, boundary ledger.TTFTBoundary) LadderStep {
	s := stats.Summary{
		Mode: ledger.ModeOpen, TTFTBoundary: boundary, RequestedRate: js.Rate, Window: asked,
		Planned: js.Planned, Pending: js.Pending, Retries: js.Retries, Attempts: js.Planned + js.Retries,
		Dispatched: js.Dispatched, Unsent: js.Unsent, Completed: js.OK, Good: js.Good, InjectedCancels: js.InjectedCancels,
		Outcomes:     stats.Outcomes{ByOutcome: map[ledger.Outcome]int{}},
		AchievedRate: js.AchievedRate, GoodputPerSecond: js.Goodput, GoodFraction: js.GoodFraction,
		TTFT: js.TTFT.Percentiles(), E2E: js.E2E.Percentiles(), DispatchLag: js.DispatchLag.Percentiles(),
		Validity: verdict.Validity{Valid: js.Valid, Causes: js.Causes, Host: js.Host.Health()},
		Steady:   js.Steady,
	}
	if len(s.Validity.Causes) == 0 {
		s.Validity.Causes = nil
	}
	if js.WindowS > 0 {
		s.Window, s.WindowAsked = secs(js.WindowS), asked
	}
	for o, n := range js.Outcomes {
		if n > 0 {
			s.Outcomes.ByOutcome[ledger.Outcome(o)] = n
		}
	}
	s.Rejected, s.Censored, s.Cancelled = s.Outcomes.ByOutcome[ledger.Rejected], s.Outcomes.ByOutcome[ledger.Censored], s.Outcomes.ByOutcome[ledger.Cancelled]
	if m := js.MatchedGaps; m != nil {
		s.PrefillGap, s.TPOTGap = m.Prefill.Percentiles(), m.TPOT.Percentiles()
	}
	st := LadderStep{Index: js.Index, Rate: js.Rate, Summary: s, Aborted: js.Aborted, AbortReason: js.AbortReason, Server: js.Server,
		IdentityStart: identityOf(js.IdentityStart), IdentityEnd: identityOf(js.IdentityEnd)}
	for _, c := range js.Classes {
		st.Classes = append(st.Classes, ClassStep{Class: c.Class, Rate: c.Rate, Summary: stats.Summary{
			Mode: ledger.ModeOpen, TTFTBoundary: boundary, RequestedRate: c.Rate, Window: s.Window,
			Planned: c.Planned, Pending: c.Pending, Completed: c.OK, Good: c.Good, GoodFraction: c.GoodFraction,
			GoodputPerSecond: c.Goodput, TTFT: c.TTFT.Percentiles(), Validity: s.Validity, Steady: s.Steady,
		}})
	}
	return st
}

// identityPtr is nil for an unknown identity (omitted from the JSON).
func identityPtr(i Identity) *Identity {
	if i.IsZero() {
		return nil
	}
	return &i
}

func identityOf(p *Identity) Identity {
	if p == nil {
		return Identity{}
	}
	return *p
}
