package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/report"
)

// TestProbeWrongAnswersReports: against a simulator told to get text
// answers wrong, `probe --checks` exits 8 and every report it writes —
// the text, the --json object and the --html page — names WRONG ANSWERS
// first in its verdict, with the failing checks and their reasons, and
// carries the checks table; no answer's text (kept only in the --ledger
// with --record-answers excerpt) reaches any report.
func TestProbeWrongAnswersReports(t *testing.T) {
	cfg := fastSim()
	cfg.WrongAnswers = []string{"text"}
	base := startSim(t, cfg)
	ledgerPath, htmlPath := tempPath(t, "ledger.jsonl"), tempPath(t, "report.html")
	args := []string{"probe", "--url", base, "--checks", shippedChecks, "--rate", "20", "--duration", "1s",
		"--arrival", "constant", "--seed", "1", "--record-answers", "excerpt"}
	r := mustExit(t, []int{exitWrongAnswers}, append(args, "--json", "--ledger", ledgerPath, "--html", htmlPath)...)

	var out struct {
		Verdict report.VerdictJSON `json:"verdict"`
		Checks  []report.CheckRow  `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("probe --json: %v\n%s", err, r.stdout)
	}
	v := out.Verdict
	if v.Result != report.ResultFail || v.ExitStatus != exitWrongAnswers || v.Cause != report.CauseTarget || !v.WrongAnswers {
		t.Errorf("JSON verdict %+v: want FAIL, exit 8, the target's, wrong_answers", v)
	}
	failing := report.FailedChecksText(out.Checks)
	if failing == "" || v.Why != report.WrongAnswers+": "+failing {
		t.Errorf("JSON why %q, want the failing checks %q", v.Why, failing)
	}
	// Only the text kind was answered wrong: the failing checks are the
	// expect checks, by mismatch; the others passed or were not judged.
	kinds := map[string]answercheck.Kind{}
	checks, _ := loadChecks(shippedChecks)
	for _, c := range checks {
		kinds[c.Name] = c.Kind()
	}
	for _, c := range out.Checks {
		if c.Fail > 0 && (kinds[c.Check] != answercheck.KindExpect || c.Reasons[string(answercheck.Mismatch)] != c.Fail) {
			t.Errorf("check %s (%s) failed %+v: only expect checks by mismatch should", c.Check, kinds[c.Check], c)
		}
		if kinds[c.Check] == answercheck.KindExpect && c.Pass > 0 {
			t.Errorf("check %s passed %d times with text answered wrong", c.Check, c.Pass)
		}
		if c.Fail > 0 && !strings.Contains(v.Why, c.Check+" failed ") {
			t.Errorf("why %q does not name %s", v.Why, c.Check)
		}
	}

	page, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	lead := `<strong class="result">FAIL</strong> <span class="exit">exit status 8</span> <span class="cause">cause: the target</span><br><strong class="wrong">WRONG ANSWERS:</strong>`
	if !strings.Contains(html, lead) || !strings.Contains(html, "<h2>Answer checks</h2>") || !strings.Contains(html, `<tr class="failed"><td class="name">`) {
		t.Errorf("HTML report lacks the wrong answers in its lead or its checks table:\n%s", html)
	}

	// The text report: the verdict line first, the table after.
	rt := mustExit(t, []int{exitWrongAnswers}, args...)
	first, _, _ := strings.Cut(rt.stdout, "\n")
	if !strings.HasPrefix(first, "verdict: FAIL (exit status 8, the target's doing): WRONG ANSWERS: ") || !strings.Contains(first, " failed ") {
		t.Errorf("text report starts %q", first)
	}
	if !strings.Contains(rt.stdout, report.ChecksHead) {
		t.Errorf("text report has no checks table:\n%s", rt.stdout)
	}

	// The answers' excerpts are in the ledger, and in no report.
	_, recs := readLedger(t, ledgerPath)
	excerpts := 0
	for _, rec := range recs {
		if rec.Check == nil || len(rec.Check.Excerpt) < 6 {
			continue
		}
		excerpts++
		for name, s := range map[string]string{"JSON": r.stdout, "HTML": html, "text": rt.stdout} {
			if strings.Contains(s, rec.Check.Excerpt) {
				t.Errorf("the %s report carries an answer's text %q", name, rec.Check.Excerpt)
			}
		}
	}
	if excerpts == 0 {
		t.Errorf("no ledger record kept an excerpt of at least 6 bytes (%d records): the test checked nothing", len(recs))
	}
}
