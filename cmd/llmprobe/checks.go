package main

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/config"
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

// checkRow is one check's results in a probe's report: the report's row
// (text, HTML and JSON render it).
type checkRow = report.CheckRow

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

// checksExit is the probe's exit status with its checks: a judged check
// that failed exits exitWrongAnswers, before a generator found invalid or
// gates failed (what the answers were does not depend on the prober's
// schedule), after a ledger not written or no request ok.
func checksExit(status error, rows []checkRow) error {
	failed := report.FailedChecksText(rows)
	if failed == "" {
		return status
	}
	switch exitCodeOf(status) {
	case exitOK, exitGeneratorInvalid, exitGatesFailed:
	default:
		if status != nil {
			return status
		}
	}
	return exitStatus{exitWrongAnswers, "wrong answers: " + failed}
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
