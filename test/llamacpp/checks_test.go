package llamacpp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// shippedLlamaChecks is the shipped canary configuration for llama.cpp.
const shippedLlamaChecks = "../../config/checks-llamacpp.yaml"

// TestProbeChecksLlamaCpp is issue 29's ground truth against a real
// engine: `probe --checks` with each target of config/checks-llamacpp.yaml
// (one API per probe) against llama-server started with --jinja tells
// apart the four outcomes of a structured-output or tool request there.
// Native json_schema on /v1/completions is enforced (pass); chat's
// json_object is silently not applied (fail invalid_json); chat's
// response_format json_schema is refused with 400 (http_error, not judged);
// chat's tools with tool_choice required get text (fail no_tool_call). The
// chat probe exits 8, the completions one does not; each record carries
// its check's verdict, the hash of the judged answer and its excerpt.
func TestProbeChecksLlamaCpp(t *testing.T) {
	testutil.RequireLlamaCpp(t)
	binary(t)
	srv := testutil.StartLlamaCpp(t, "--jinja")
	type want struct {
		result, reason string
		outcome        ledger.Outcome
	}
	for _, tc := range []struct {
		target, api string
		exits       []int
		checks      map[string]want
	}{
		{"llama-completions", "openai-completions", []int{0, 4}, map[string]want{
			"json-native": {"pass", "", ledger.OK},
		}},
		{"llama-chat", "openai-chat", []int{8}, map[string]want{
			"json-object": {"fail", "invalid_json", ledger.OK},
			"json-schema": {"not_judged", "", ledger.HTTPError},
			"weather":     {"fail", "no_tool_call", ledger.OK},
		}},
	} {
		t.Run(tc.target, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), tc.target+".yaml")
			if err := os.WriteFile(file, []byte(targetOf(t, tc.target)), 0o600); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "ledger.jsonl")
			stdout, stderr, code := testutil.Run(t, 120*time.Second, testutil.Env(), binary(t), "probe",
				"--url", srv.URL()+"/v1", "--model", "tiny", "--api", tc.api, "--checks", file,
				"--rate", "2", "--duration", "3s", "--arrival", "constant", "--seed", "1",
				"--record-answers", "excerpt", "--ledger", path, "--json")
			var out struct {
				Checks []struct {
					Check     string         `json:"check"`
					Runs      int            `json:"runs"`
					Pass      int            `json:"pass"`
					Fail      int            `json:"fail"`
					Reasons   map[string]int `json:"fail_reasons"`
					NotJudged int            `json:"not_judged"`
				} `json:"checks"`
			}
			if err := json.Unmarshal(stdout, &out); err != nil {
				t.Fatalf("probe --json (exit %d): %v\nstderr:\n%s", code, err, testutil.Tail(string(stderr), 3000))
			}
			if !slices.Contains(tc.exits, code) {
				t.Fatalf("probe exit %d, want one of %v; stderr:\n%s", code, tc.exits, testutil.Tail(string(stderr), 3000))
			}
			if len(out.Checks) != len(tc.checks) {
				t.Fatalf("checks table %+v, want a row for each of %v", out.Checks, tc.checks)
			}
			for _, row := range out.Checks {
				w, ok := tc.checks[row.Check]
				n := map[string]int{"pass": row.Pass, "fail": row.Fail, "not_judged": row.NotJudged}[w.result]
				if !ok || row.Runs == 0 || n != row.Runs || (w.reason != "" && row.Reasons[w.reason] != row.Runs) {
					t.Errorf("%s: %+v, want every run %s %s", row.Check, row, w.result, w.reason)
				}
			}
			lf, err := readLedger(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range lf.records {
				c := rec.Check
				if c == nil {
					t.Errorf("record %d carries no check: every request of a canary probe is one", rec.ID)
					continue
				}
				w := tc.checks[c.Name]
				if rec.Outcome != w.outcome || string(c.Result) != w.result || string(c.Reason) != w.reason {
					t.Errorf("record %d (%s): %s, %s %s; want %s, %s %s", rec.ID, c.Name, rec.Outcome, c.Result, c.Reason, w.outcome, w.result, w.reason)
				}
				judged := w.result != "not_judged"
				if judged != (len(c.AnswerSHA256) == 64) || judged != (c.Excerpt != "") || len(c.Excerpt) > 256 {
					t.Errorf("record %d (%s): hash %q excerpt %q: a judged answer has both (≤ 256 bytes), an unjudged one neither", rec.ID, c.Name, c.AnswerSHA256, c.Excerpt)
				}
			}
		})
	}
}

// targetOf is the shipped llama.cpp checks file with its one target name
// kept (its targets stand alone: no anchor crosses them).
func targetOf(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(shippedLlamaChecks)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, ok := strings.Cut(string(b), "targets:\n")
	if !ok {
		t.Fatalf("%s has no targets", shippedLlamaChecks)
	}
	parts := strings.Split("\n"+rest, "\n  - name: ")
	for _, p := range parts[1:] {
		if strings.HasPrefix(p, name+"\n") {
			return head + "targets:\n  - name: " + p + "\n"
		}
	}
	t.Fatalf("no target %s in %s", name, shippedLlamaChecks)
	return ""
}
