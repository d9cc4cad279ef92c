package main

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// loadChecks reads the answer checks of a configuration file (--checks):
// the checks of every canary class of its targets, in order, the file
// checked as the daemon checks it. A check found twice (the same library
// under several targets) is taken once; two different checks of one name
// are refused. The environment's LLMPROBE_* keys are not read: only the
// file's checks are taken.
func loadChecks(path string) ([]answercheck.Check, error) {
	c, err := wiring.Load(config.Options{Path: path, Environ: func() []string { return nil }})
	if err != nil {
		return nil, badFlag("--checks: %v", err)
	}
	var out []answercheck.Check
	where := map[string]string{}
	for i, t := range c.Targets {
		for j, cl := range t.Classes {
			for k, ch := range cl.Checks {
				key := fmt.Sprintf("targets[%d].classes[%d].checks[%d]", i, j, k)
				if first, ok := where[ch.Name]; ok {
					if !reflect.DeepEqual(out[indexOf(out, ch.Name)], ch) {
						return nil, badFlag("--checks %s: %s and %s are two checks named %q: a probe sends them as one class, so names must differ", path, first, key, ch.Name)
					}
					continue
				}
				where[ch.Name] = key
				out = append(out, ch)
			}
		}
	}
	if len(out) == 0 {
		return nil, badFlag("--checks %s: no class of its targets has checks", path)
	}
	if len(out) > config.MaxChecksPerClass {
		return nil, badFlag("--checks %s: %d checks, a probe sends at most %d (one class)", path, len(out), config.MaxChecksPerClass)
	}
	return out, nil
}

func indexOf(cs []answercheck.Check, name string) int {
	for i := range cs {
		if cs[i].Name == name {
			return i
		}
	}
	return -1
}

// checkRow is one check's results in a probe's report (and its JSON).
type checkRow struct {
	Check     string         `json:"check"`
	Kind      string         `json:"kind"`
	Runs      int            `json:"runs"`
	Pass      int            `json:"pass"`
	Fail      int            `json:"fail"`
	Reasons   map[string]int `json:"fail_reasons,omitempty"`
	NotJudged int            `json:"not_judged"`
}

// checkTally counts a probe's answer checks from its finished records (a
// ledger.Sink), by check, in the order the checks were configured.
type checkTally struct {
	mu   sync.Mutex
	rows []checkRow
	at   map[string]int
}

func newCheckTally(checks []answercheck.Check) *checkTally {
	t := &checkTally{at: map[string]int{}}
	for _, c := range checks {
		t.at[c.Name] = len(t.rows)
		t.rows = append(t.rows, checkRow{Check: c.Name, Kind: string(c.Kind())})
	}
	return t
}

// Record implements ledger.Sink. A record without a check, or of a check
// not configured, adds nothing; a result outside the closed set is not
// judged, and a failure's reason outside its set is counted as "other".
func (t *checkTally) Record(rec *ledger.Record) {
	c := rec.Check
	if c == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.at[c.Name]
	if !ok {
		return
	}
	r := &t.rows[i]
	r.Runs++
	switch c.Result {
	case answercheck.Pass:
		r.Pass++
	case answercheck.Fail:
		r.Fail++
		reason := string(c.Reason)
		if !validReason(c.Reason) {
			reason = "other"
		}
		if r.Reasons == nil {
			r.Reasons = map[string]int{}
		}
		r.Reasons[reason]++
	default:
		r.NotJudged++
	}
}

func validReason(r answercheck.Reason) bool {
	for _, x := range answercheck.Reasons() {
		if r == x {
			return true
		}
	}
	return false
}

// Rows returns a copy of the rows.
func (t *checkTally) Rows() []checkRow {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]checkRow, len(t.rows))
	for i, r := range t.rows {
		out[i] = r
		if r.Reasons != nil {
			out[i].Reasons = make(map[string]int, len(r.Reasons))
			for k, v := range r.Reasons {
				out[i].Reasons[k] = v
			}
		}
	}
	return out
}

// reasonsText is a row's failure reasons, most frequent first: "mismatch 3, schema 1".
func reasonsText(m map[string]int) string { return durfmt.Counts(m, "%s %d") }

// checksText writes the checks table after a probe's report.
func checksText(w io.Writer, rows []checkRow) error {
	var b strings.Builder
	b.WriteString("\nanswer checks (pass: the answer was right; fail: wrong; not judged: the request did not end ok)\n")
	fmt.Fprintf(&b, "  %-24s %-10s %5s %5s %5s %10s  %s\n", "check", "kind", "runs", "pass", "fail", "not_judged", "fail reasons")
	for _, r := range rows {
		line := fmt.Sprintf("  %-24s %-10s %5d %5d %5d %10d  %s", r.Check, r.Kind, r.Runs, r.Pass, r.Fail, r.NotJudged, reasonsText(r.Reasons))
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// probeWithChecks is the probe's JSON report with its checks beside the
// figures ("checks", absent without checks).
type probeWithChecks struct {
	report.Probe
	Checks []checkRow `json:"checks,omitempty"`
}

// probeJSON writes the probe's JSON report, as report.ProbeJSON does, with
// its checks.
func probeJSON(w io.Writer, p report.Probe, rows []checkRow) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(probeWithChecks{Probe: p, Checks: rows}); err != nil {
		return fmt.Errorf("report: writing JSON report: %w", err)
	}
	return nil
}

// checksExit is the probe's exit status with its checks: a judged check
// that failed exits exitWrongAnswers, before a generator found invalid or
// gates failed (what the answers were does not depend on the prober's
// schedule), after a ledger not written or no request ok.
func checksExit(status error, rows []checkRow) error {
	var failed []string
	for _, r := range rows {
		if r.Fail > 0 {
			failed = append(failed, fmt.Sprintf("%s failed %d of %d (%s)", r.Check, r.Fail, r.Runs, reasonsText(r.Reasons)))
		}
	}
	if len(failed) == 0 {
		return status
	}
	switch exitCodeOf(status) {
	case exitOK, exitGeneratorInvalid, exitGatesFailed:
	default:
		if status != nil {
			return status
		}
	}
	return exitStatus{exitWrongAnswers, "wrong answers: " + strings.Join(failed, "; ")}
}

// checksPass says what the checks of a run that did not fail them met.
func checksPass(rows []checkRow) string {
	judged, notJudged := 0, 0
	for _, r := range rows {
		judged += r.Pass + r.Fail
		notJudged += r.NotJudged
	}
	if judged == 0 {
		return fmt.Sprintf("no answer check was judged (%d not judged)", notJudged)
	}
	return fmt.Sprintf("answer checks: %d judged, all passed (%d not judged)", judged, notJudged)
}
