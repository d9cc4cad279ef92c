package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// Results of a run's verdict.
const (
	// ResultPass: the run met its gates (a probe's good fraction, a
	// ladder's capacity) and exits 0.
	ResultPass = "PASS"
	// ResultFail: the target failed what the run asked of it (no request
	// ok, gates failed, no capacity); or the run's output was not written.
	ResultFail = "FAIL"
	// ResultInvalid: the prober did not keep its schedule, so the figures
	// cannot judge the target either way.
	ResultInvalid = "INVALID"
)

// Causes of a verdict: whose doing it is.
const (
	CauseTarget = "target" // the target's answers decided it
	CauseProber = "prober" // the prober (its host, its schedule, its output files) decided it
)

// RunVerdict is a run's verdict as every report leads with it: PASS, FAIL
// or INVALID against the gates, the exit status the command ends with,
// whose doing it is and why. The command computes it once, from the same
// figures its exit status comes from, and the text, HTML and JSON reports
// render that one value (VerdictLine, the HTML's lead, VerdictJSON).
//
// Wrong names the answer checks (probe --checks) that were judged and
// failed, with their counts and reasons (FailedChecksText: "add failed 2
// of 3 (mismatch 2)"), never an answer's text: whatever else decided
// the exit status, every rendering names them first after the result,
// as "WRONG ANSWERS: …". Why then says what decided the exit status besides
// them, "" when the wrong answers did (exit status 8).
type RunVerdict struct {
	Result string // ResultPass, ResultFail or ResultInvalid
	Exit   int    // the process's exit status
	Cause  string // CauseTarget or CauseProber; "" for a pass
	Why    string // what decided it, with its figures
	Wrong  string // the failing answer checks; "": none failed (or none ran)
}

// WrongAnswers is the state a verdict with failing answer checks names
// first (the status page's state word for the same finding).
const WrongAnswers = "WRONG ANSWERS"

// WrongText is "WRONG ANSWERS: " and the failing checks with their
// reasons, "" when none failed.
func (v RunVerdict) WrongText() string {
	if v.Wrong == "" {
		return ""
	}
	return WrongAnswers + ": " + v.Wrong
}

// WhyText is the verdict's explanation as the reports print it: the wrong
// answers first (WrongText), then Why.
func (v RunVerdict) WhyText() string {
	w := v.WrongText()
	switch {
	case w == "":
		return v.Why
	case v.Why == "":
		return w
	}
	return w + "; " + v.Why
}

// VerdictJSON is a verdict's JSON shape (`verdict` in probe and ladder
// --json).
type VerdictJSON struct {
	Result     string `json:"result"` // PASS | FAIL | INVALID
	ExitStatus int    `json:"exit_status"`
	Cause      string `json:"cause,omitempty"` // target | prober
	Why        string `json:"why"`             // WhyText: the wrong answers first
	// WrongAnswers: an answer check (probe --checks) was judged and
	// failed, whatever decided the exit status; why names the checks and
	// `checks` has their rows. Absent when none failed.
	WrongAnswers bool `json:"wrong_answers,omitempty"`
}

// JSON is v's JSON shape.
func (v RunVerdict) JSON() *VerdictJSON {
	return &VerdictJSON{Result: v.Result, ExitStatus: v.Exit, Cause: v.Cause, Why: v.WhyText(), WrongAnswers: v.Wrong != ""}
}

// Line is the verdict in one line: "FAIL (exit status 5, the target's
// doing): gates failed: …", or with failing answer checks "FAIL (exit
// status 8, the target's doing): WRONG ANSWERS: add failed 2 of 3
// (mismatch 2)".
func (v RunVerdict) Line() string {
	who := ""
	switch v.Cause {
	case CauseTarget:
		who = ", the target's doing"
	case CauseProber:
		who = ", the prober's doing"
	}
	return fmt.Sprintf("%s (exit status %d%s): %s", v.Result, v.Exit, who, v.WhyText())
}

// class is the verdict's CSS class in the HTML reports.
func (v RunVerdict) class() string { return strings.ToLower(v.Result) }

// VerdictText writes a run's verdict line, the first of its text report
// (nothing when v is nil).
func VerdictText(w io.Writer, v *RunVerdict) error {
	if v == nil {
		return nil
	}
	if _, err := fmt.Fprintf(w, "verdict: %s\n\n", v.Line()); err != nil {
		return fmt.Errorf("report: writing verdict: %w", err)
	}
	return nil
}

// LadderJSON writes a ladder's result in its schema (stats/ladderjson.go,
// the history line's) as one indented object, with the run's verdict
// added as `verdict` when v is not nil: the history keeps the result, the
// command's output says what it concluded.
func LadderJSON(w io.Writer, res ladderresult.LadderResult, v *RunVerdict) error {
	b, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("report: ladder JSON: %w", err)
	}
	if v != nil {
		vb, err := json.Marshal(v.JSON())
		if err != nil {
			return fmt.Errorf("report: ladder verdict JSON: %w", err)
		}
		b = append(append(append(bytes.TrimSuffix(bytes.TrimSpace(b), []byte("}")), `,"verdict":`...), vb...), '}')
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return fmt.Errorf("report: ladder JSON: %w", err)
	}
	out.WriteByte('\n')
	if _, err := out.WriteTo(w); err != nil {
		return fmt.Errorf("report: writing ladder JSON: %w", err)
	}
	return nil
}

// generatorLead is a probe's generator verdict for the HTML lead: VALID,
// or INVALID with each cause (host or prober) and what to do.
func generatorLead(v verdict.Validity) string {
	if v.Valid {
		return "VALID: the prober kept its schedule, so the figures measure the target"
	}
	var cs []string
	for _, c := range v.Causes {
		cs = append(cs, fmt.Sprintf("%s (%s; what to do: %s)", c.Cause, c.Reason, c.Action))
	}
	if len(cs) == 0 {
		return "INVALID: the prober did not keep its schedule"
	}
	return "INVALID: the prober did not keep its schedule: " + strings.Join(cs, "; ")
}

// ladderGeneratorLead is a ladder's generator verdict for the HTML lead:
// valid on every step, or which steps were invalid and by what cause.
func ladderGeneratorLead(res ladderresult.LadderResult) string {
	var bad []string
	for _, st := range res.Steps {
		if v := st.Summary.Validity; !v.Valid {
			cause := "no cause recorded"
			if names := v.CauseNames(); len(names) > 0 {
				cause = strings.Join(names, ", ")
			}
			bad = append(bad, fmt.Sprintf("step %d (%s)", st.Index, cause))
		}
	}
	switch {
	case len(res.Steps) == 0:
		return "no step ran"
	case len(bad) == 0:
		return fmt.Sprintf("VALID on every step (%d): the prober kept its schedule, so the figures measure the target", len(res.Steps))
	}
	return fmt.Sprintf("INVALID on %d of %d steps: %s — the prober did not keep its schedule there; those steps are never used for capacity or knee (causes and what to do below the table)",
		len(bad), len(res.Steps), strings.Join(bad, ", "))
}

// stopLead says why a ladder ended where it did: its stop_at rule, its
// abort (with the step that fired it) or its last step.
func stopLead(res ladderresult.LadderResult) string {
	switch {
	case res.Stopped != "":
		return res.Stopped
	case res.Aborted:
		for _, st := range res.Steps {
			if st.Aborted {
				return fmt.Sprintf("aborted at step %d: %s", st.Index, st.AbortReason)
			}
		}
		return "aborted: " + res.AbortReason
	case len(res.Steps) == 0:
		return "no step ran"
	}
	return fmt.Sprintf("ran every step (%d), up to %s req/s", len(res.Steps), num(res.Steps[len(res.Steps)-1].Rate))
}
