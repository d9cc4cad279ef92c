package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/report"
)

const shippedChecks = "../../config/checks.yaml"

// TestLoadShippedChecks: --checks takes the shipped example's canary
// classes' checks, one of each kind at least, YAML anchors and merges
// resolved.
func TestLoadShippedChecks(t *testing.T) {
	checks, err := loadChecks(shippedChecks)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[answercheck.Kind]int{}
	for _, c := range checks {
		kinds[c.Kind()]++
	}
	for _, k := range answercheck.Kinds() {
		if kinds[k] == 0 {
			t.Errorf("no %s check in %s: %v", k, shippedChecks, kinds)
		}
	}
	rt := checks[indexOf(checks, "weather-round-trip")]
	if rt.Tool == nil || len(rt.Tool.Tools) != 1 || rt.Tool.Tools[0].Name != "get_weather" || rt.Tool.RoundTrip == nil || rt.Tool.RoundTrip.Result != "18 degrees" {
		t.Errorf("weather-round-trip decoded as %+v", rt.Tool)
	}
}

func TestLoadChecksRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	target := func(name, check string) string {
		return "  - name: " + name + "\n    url: http://127.0.0.1:8000/v1\n    model: m\n    classes:\n      - name: c\n        checks: [" + check + "]\n"
	}
	same := write("same.yaml", "targets:\n"+target("a", "{name: x, prompt: p, length: {}}")+target("b", "{name: x, prompt: p, length: {}}"))
	if cs, err := loadChecks(same); err != nil || len(cs) != 1 {
		t.Errorf("one check under two targets: %v, %v; want it once", cs, err)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"clash.yaml", "targets:\n" + target("a", "{name: x, prompt: p, length: {}}") + target("b", "{name: x, prompt: q, length: {}}"), `two checks named "x"`},
		{"none.yaml", "targets:\n  - {name: a, url: \"http://127.0.0.1:8000/v1\", model: m}\n", "no class of its targets has checks"},
		{"bad.yaml", "targets:\n" + target("a", "{name: X!, prompt: p, length: {}}"), "checks[0].name"},
	} {
		_, err := loadChecks(write(tc.name, tc.body))
		var ue usageError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &ue) {
			t.Errorf("%s: %v, want a usage error with %q", tc.name, err, tc.want)
		}
	}
}

func tallyFixture() *checkTally {
	checks := []answercheck.Check{
		{Name: "add", Expect: &answercheck.Expect{Text: "5"}},
		{Name: "schema", JSON: &answercheck.JSONCheck{}},
		{Name: "model", Model: &answercheck.Model{Name: "m"}},
	}
	t := newCheckTally(checks)
	for _, c := range []ledger.CheckRecord{
		{Name: "add", Result: answercheck.Pass}, {Name: "add", Result: answercheck.Fail, Reason: answercheck.Mismatch},
		{Name: "add", Result: answercheck.Fail, Reason: answercheck.Mismatch},
		{Name: "schema", Result: answercheck.Fail, Reason: answercheck.InvalidJSON}, {Name: "schema", Result: answercheck.NotJudged},
		{Name: "schema", Result: answercheck.Fail, Reason: "<script>"},
		{Name: "model", Result: answercheck.Pass}, {Name: "unknown", Result: answercheck.Fail, Reason: answercheck.Mismatch},
	} {
		t.Record(&ledger.Record{Check: &c})
	}
	t.Record(&ledger.Record{}) // no check: nothing
	return t
}

// TestCheckTally: the table counts each configured check's runs, passes,
// failures by reason (a reason outside the closed set as "other") and
// requests not judged, in the configured order; JSON carries the same.
func TestCheckTally(t *testing.T) {
	rows := tallyFixture().Rows()
	want := []checkRow{
		{Check: "add", Kind: "expect", Runs: 3, Pass: 1, Fail: 2, Reasons: map[string]int{"mismatch": 2}},
		{Check: "schema", Kind: "json", Runs: 3, Fail: 2, NotJudged: 1, Reasons: map[string]int{"invalid_json": 1, "other": 1}},
		{Check: "model", Kind: "model", Runs: 1, Pass: 1},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Check != w.Check || r.Kind != w.Kind || r.Runs != w.Runs || r.Pass != w.Pass || r.Fail != w.Fail || r.NotJudged != w.NotJudged || r.ReasonsText() != w.ReasonsText() {
			t.Errorf("row %d: %+v, want %+v", i, r, w)
		}
	}
	var b bytes.Buffer
	if err := report.ChecksText(&b, rows); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"check                    kind        runs  pass  fail not_judged  fail reasons",
		"add                      expect         3     1     2          0  mismatch 2",
		"schema                   json           3     0     2          1  invalid_json 1, other 1"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("table lacks %q:\n%s", line, b.String())
		}
	}
	if strings.Contains(b.String(), "<script>") {
		t.Errorf("a reason outside the closed set reached the table:\n%s", b.String())
	}
	b.Reset()
	if err := report.ProbeJSON(&b, report.Probe{Mode: "open", Checks: rows}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Mode   string     `json:"mode"`
		Checks []checkRow `json:"checks"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil || got.Mode != "open" || len(got.Checks) != 3 || got.Checks[1].Reasons["invalid_json"] != 1 {
		t.Errorf("JSON report %s: %+v, %v", b.String(), got, err)
	}
	b.Reset()
	if err := report.ProbeJSON(&b, report.Probe{Mode: "open"}); err != nil || strings.Contains(b.String(), "checks") {
		t.Errorf("a report without checks carries %q (%v)", b.String(), err)
	}
}

// TestChecksExit: a failed check exits 8 over a pass, an invalid
// generator (4) or failed gates (5), never over an unwritten ledger (7)
// or no request ok (3); checks that all passed change nothing.
func TestChecksExit(t *testing.T) {
	failed := tallyFixture().Rows()
	passed := []checkRow{{Check: "add", Runs: 2, Pass: 2}, {Check: "x", Runs: 1, NotJudged: 1}}
	for _, tc := range []struct {
		status error
		rows   []checkRow
		want   int
	}{
		{nil, failed, exitWrongAnswers},
		{exitStatus{exitGeneratorInvalid, "late"}, failed, exitWrongAnswers},
		{exitStatus{exitGatesFailed, "slow"}, failed, exitWrongAnswers},
		{exitStatus{exitNotWritten, "disk"}, failed, exitNotWritten},
		{exitStatus{exitNoSuccess, "none"}, failed, exitNoSuccess},
		{nil, passed, exitOK},
		{exitStatus{exitGeneratorInvalid, "late"}, passed, exitGeneratorInvalid},
	} {
		err := checksExit(tc.status, tc.rows)
		got := exitOK
		if err != nil {
			got = exitCodeOf(err)
		}
		if got != tc.want {
			t.Errorf("checksExit(%v): exit %d (%v), want %d", tc.status, got, err, tc.want)
		}
	}
	if got := checksPass(passed); got != "answer checks: 2 judged, all passed (1 not judged)" {
		t.Errorf("checksPass: %q", got)
	}
	if got := checksPass([]checkRow{{Check: "a"}}); got != "no answer check was judged (0 not judged)" {
		t.Errorf("checksPass without runs: %q", got)
	}
	err := checksExit(nil, failed)
	if want := "wrong answers: add failed 2 of 3 (mismatch 2); schema failed 2 of 2 (invalid_json 1, other 1)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("why %v, want %q", err, want)
	}
	if v := runVerdict(err, ""); v.Result != report.ResultFail || v.Exit != exitWrongAnswers || v.Cause != report.CauseTarget {
		t.Errorf("verdict %+v: want FAIL, exit 8, the target's", v)
	}
}

// TestProbeChecksAgainstSimulator: `probe --checks` with the shipped
// checks against the built-in simulator sends every check, prints the
// checks table, and (the simulator answering the prompt library right)
// exits 0 with every judged check passed.
func TestProbeChecksAgainstSimulator(t *testing.T) {
	r := mustExit(t, []int{exitOK, exitGeneratorInvalid, exitWrongAnswers}, "probe", "--checks", shippedChecks, "--rate", "10", "--duration", "2s",
		"--arrival", "constant", "--seed", "1", "--json")
	var out struct {
		Planned   int        `json:"planned"`
		Completed int        `json:"completed"`
		Checks    []checkRow `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("probe --json: %v\n%s", err, r.stdout)
	}
	checks, _ := loadChecks(shippedChecks)
	if len(out.Checks) != len(checks) {
		t.Fatalf("checks table %+v, want a row per shipped check (%d)", out.Checks, len(checks))
	}
	runs := 0
	for _, c := range out.Checks {
		runs += c.Runs
	}
	if runs == 0 {
		t.Skip("no record carried a check: protocol.Client does not judge checks yet (the judging branch)")
	}
	// Every request sent is a check: at least every ok one carries its
	// result, and none beyond the planned.
	if runs < out.Completed || runs > out.Planned {
		t.Errorf("%d check runs for %d ok of %d planned requests: every request of the class is a check", runs, out.Completed, out.Planned)
	}
	for _, c := range out.Checks {
		if c.Runs == 0 && out.Planned >= 2*len(checks) {
			t.Errorf("check %s never ran in %d requests: not in rotation", c.Check, out.Planned)
		}
		if c.Fail > 0 {
			t.Errorf("check %s failed against the simulator: %+v", c.Check, c)
		}
	}
	if r.code == exitWrongAnswers {
		t.Errorf("exit 8 against the simulator: %s", lastLine(r.stderr))
	}
	// The text report ends with the table.
	r = mustExit(t, []int{exitOK, exitGeneratorInvalid}, "probe", "--checks", shippedChecks, "--rate", "10", "--duration", "1s", "--seed", "1")
	if !strings.Contains(r.stdout, "answer checks (pass:") || !strings.Contains(r.stdout, "length-5") {
		t.Errorf("text report has no checks table:\n%s", r.stdout)
	}
}

// TestProbeChecksFlags: --checks conflicts are usage errors naming the flags.
func TestProbeChecksFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--checks", shippedChecks, "--prefix-tokens", "64"}, "--prefix-tokens: a canary class sends its checks"},
		{[]string{"--checks", shippedChecks, "--session-turns", "2"}, "--session-turns: a canary class sends its checks"},
		{[]string{"--checks", shippedChecks, "--api", "openai-responses"}, "the target's api openai-responses has no stop sequences"},
		{[]string{"--record-answers", "excerpt"}, "--record-answers: excerpt keeps a check's answer"},
		{[]string{"--checks", "/nonexistent/checks.yaml"}, "--checks"},
	} {
		r := mustExit(t, []int{exitUsage}, append([]string{"probe"}, tc.args...)...)
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("probe %v: stderr lacks %q:\n%s", tc.args, tc.want, r.stderr)
		}
	}
}
