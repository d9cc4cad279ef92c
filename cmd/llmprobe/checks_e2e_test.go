package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// wrongAnswerCases: for each kind of wrong answer the simulator gives on
// demand (POST /admin/state {"wrong_answers": [kind]}), the shipped checks
// (config/checks.yaml) that must fail and their reason. Every other shipped
// check must still pass: a wrong kind breaks its own checks and no other.
var wrongAnswerCases = []struct {
	kind string
	fail map[string]string // check name → fail reason
}{
	{"", nil}, // all right
	{"text", map[string]string{"add": "mismatch", "multiply": "mismatch", "copy": "mismatch"}},
	{"json", map[string]string{"json-object": "invalid_json"}},
	// The round trip's final answer ("The tool said nothing.") misses
	// its expectation: mismatch.
	{"tool_call", map[string]string{"weather": "no_tool_call", "weather-round-trip": "mismatch"}},
	{"stop", map[string]string{"stop-at-6": "stop_ignored"}},
	{"length", map[string]string{"length-5": "length_ignored"}},
	{"model", map[string]string{"model-name": "wrong_model"}},
}

// TestProbeChecksWrongAnswers is issue 29's ground truth for `probe`:
// against the simulator switched to each kind of wrong answer, on each of
// the four APIs where the kind applies, `probe --checks` with the shipped
// checks fails exactly the checks of that kind with their reason, passes
// the others, exits 8, and its JSON report carries the table and a FAIL
// verdict of the target's doing that names them. With every answer right
// no check fails and the exit is not 8.
func TestProbeChecksWrongAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("28 probes against the simulator")
	}
	base := startSim(t, fastSim())
	admin := strings.TrimSuffix(base, "/v1") + "/admin/state"
	for _, api := range protocol.Names() {
		path, names := checksForAPI(t, api)
		for _, tc := range wrongAnswerCases {
			name := api + "/" + tc.kind
			if tc.kind == "" {
				name = api + "/right"
			}
			t.Run(name, func(t *testing.T) {
				wrong := []string{}
				if tc.kind != "" {
					wrong = append(wrong, tc.kind)
				}
				setWrongAnswers(t, admin, wrong)
				want := map[string]string{}
				for c, reason := range tc.fail {
					if slices.Contains(names, c) {
						want[c] = reason
					}
				}
				if tc.kind != "" && len(want) == 0 {
					t.Skipf("%s has no check of kind %s (the api does not take it)", api, tc.kind)
				}
				codes := []int{exitOK, exitGeneratorInvalid}
				if len(want) > 0 {
					codes = []int{exitWrongAnswers} // outranks 4: a loaded host does not hide a wrong answer
				}
				// 20 requests in rotation over at most 9 checks: each runs twice.
				r := mustExit(t, codes, "probe", "--url", base, "--api", api, "--checks", path,
					"--rate", "20", "--duration", "1s", "--arrival", "constant", "--seed", "1", "--json")
				var out struct {
					Verdict struct {
						Result     string `json:"result"`
						ExitStatus int    `json:"exit_status"`
						Cause      string `json:"cause"`
						Why        string `json:"why"`
					} `json:"verdict"`
					Checks []checkRow `json:"checks"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
					t.Fatalf("probe --json: %v\n%s", err, r.stdout)
				}
				assertCheckRows(t, out.Checks, names, want)
				if len(want) == 0 {
					return
				}
				v := out.Verdict
				if v.Result != "FAIL" || v.ExitStatus != exitWrongAnswers || v.Cause != "target" || !strings.HasPrefix(v.Why, report.WrongAnswers+": ") {
					t.Errorf("verdict %+v: want FAIL, exit 8, the target's doing, why \"WRONG ANSWERS: …\"", v)
				}
				for c, reason := range want {
					if !regexp.MustCompile(`\b` + regexp.QuoteMeta(c) + ` failed \d+ of \d+ \(` + reason + ` \d+\)`).MatchString(v.Why) {
						t.Errorf("verdict's why %q does not name %s failing %s", v.Why, c, reason)
					}
				}
				if !strings.Contains(lastLine(r.stderr), "exit 8: wrong answers: ") {
					t.Errorf("stderr's last line %q: want the exit 8 verdict", lastLine(r.stderr))
				}
			})
		}
	}
	setWrongAnswers(t, admin, []string{})
}

// assertCheckRows: the table has a row per check, each of which ran; the
// checks of want failed every judged run with their reason alone, the
// others failed none.
func assertCheckRows(t *testing.T, rows []checkRow, names []string, want map[string]string) {
	t.Helper()
	if len(rows) != len(names) {
		t.Fatalf("checks table %+v, want a row for each of %v", rows, names)
	}
	for i, row := range rows {
		if row.Check != names[i] {
			t.Errorf("row %d is %s, want %s (the configured order)", i, row.Check, names[i])
		}
		if row.Runs == 0 || row.Pass+row.Fail+row.NotJudged != row.Runs {
			t.Errorf("%s: %+v: want runs, each pass, fail or not judged", row.Check, row)
			continue
		}
		reason, failing := want[row.Check]
		switch {
		case failing && (row.Fail == 0 || row.Pass != 0 || len(row.Reasons) != 1 || row.Reasons[reason] != row.Fail):
			t.Errorf("%s: %+v: want every judged run failed %s", row.Check, row, reason)
		case !failing && (row.Fail != 0 || row.Pass == 0):
			t.Errorf("%s: %+v: want passed (its kind's answers are right)", row.Check, row)
		}
	}
}

// checksForAPI writes the shipped checks file without the canary classes
// whose checks api cannot send (stop on openai-responses, tool_call on
// openai-completions), and returns its path and the names of the checks
// it keeps, in order.
func checksForAPI(t *testing.T, api string) (string, []string) {
	t.Helper()
	c, err := wiring.Load(config.Options{Path: shippedChecks, Environ: func() []string { return nil }})
	if err != nil {
		t.Fatalf("load %s: %v", shippedChecks, err)
	}
	text, err := os.ReadFile(shippedChecks)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cl := range c.Targets[0].Classes {
		drop := false
		for i := range cl.Checks {
			drop = drop || protocol.CheckSupported(api, &cl.Checks[i]) != nil
		}
		if drop {
			text = dropClass(t, text, cl.Name)
			continue
		}
		for _, ch := range cl.Checks {
			names = append(names, ch.Name)
		}
	}
	path := filepath.Join(t.TempDir(), "checks-"+api+".yaml")
	if err := os.WriteFile(path, text, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, names
}

// dropClass removes the class named name (its "- name:" line and every
// more indented line after it) from a configuration file's text.
func dropClass(t *testing.T, text []byte, name string) []byte {
	t.Helper()
	lines := strings.SplitAfter(string(text), "\n")
	var out strings.Builder
	indent, found := -1, false
	for _, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		depth := len(l) - len(trimmed)
		if indent >= 0 && (strings.TrimSpace(l) == "" || depth > indent) {
			continue // inside the dropped class
		}
		indent = -1
		if strings.TrimSpace(trimmed) == "- name: "+name {
			indent, found = depth, true
			continue
		}
		out.WriteString(l)
	}
	if !found {
		t.Fatalf("no class %s in %s", name, shippedChecks)
	}
	return []byte(out.String())
}

// setWrongAnswers switches the simulator's wrong answers live.
func setWrongAnswers(t *testing.T, adminURL string, kinds []string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"wrong_answers": kinds})
	resp, err := http.Post(adminURL, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", adminURL, err)
	}
	defer resp.Body.Close()
	var state struct {
		WrongAnswers []string `json:"wrong_answers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&state); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s %s: %s, %v", adminURL, body, resp.Status, err)
	}
	if !slices.Equal(state.WrongAnswers, kinds) {
		t.Fatalf("simulator's wrong_answers %v after setting %v", state.WrongAnswers, kinds)
	}
}
