package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// checkRows is a probe's checks: one passing, one failing by two reasons
// with a run not judged, one failing once, one never judged.
func checkRows() []CheckRow {
	return []CheckRow{
		{Check: "add", Kind: "expect", Runs: 3, Pass: 3},
		{Check: "schema", Kind: "json", Runs: 4, Pass: 1, Fail: 2, NotJudged: 1, Reasons: map[string]int{"schema": 1, "invalid_json": 1}},
		{Check: "weather", Kind: "tool_call", Runs: 3, Pass: 0, Fail: 3, Reasons: map[string]int{"no_tool_call": 3}},
		{Check: "model-name", Kind: "model", Runs: 2, NotJudged: 2},
	}
}

// TestFailedChecksText: each failing check, in order, its failures against
// its judged runs (not judged left out) and its reasons most frequent
// first (ties by name); checks that did not fail are left out.
func TestFailedChecksText(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows []CheckRow
		want string
	}{
		{"none", nil, ""},
		{"all pass", checkRows()[:1], ""},
		{"never judged", checkRows()[3:], ""},
		{"failing", checkRows(), "schema failed 2 of 3 (invalid_json 1, schema 1); weather failed 3 of 3 (no_tool_call 3)"},
		{"reasons by count", []CheckRow{{Check: "rt", Runs: 5, Pass: 1, Fail: 4, Reasons: map[string]int{"wrong_tool": 1, "mismatch": 3}}},
			"rt failed 4 of 5 (mismatch 3, wrong_tool 1)"},
	} {
		if got := FailedChecksText(tc.rows); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if failed := FailedChecks(tc.rows); (len(failed) > 0) != (tc.want != "") {
			t.Errorf("%s: FailedChecks %v, text %q", tc.name, failed, tc.want)
		}
	}
}

// TestChecksEverywhere: a probe's text, HTML and JSON carry the same checks
// table, and a verdict with failing checks names WRONG ANSWERS first in
// each, with the failing checks and reasons — whatever else decided the
// exit status; without failures the word appears nowhere, and without
// checks no report mentions them.
func TestChecksEverywhere(t *testing.T) {
	failing := FailedChecksText(checkRows())
	for _, tc := range []struct {
		name    string
		rows    []CheckRow
		verdict RunVerdict
		line    string // the text's first line
		lead    string // the HTML lead's first evidence row
	}{
		{"wrong answers", checkRows(), RunVerdict{Result: ResultFail, Exit: 8, Cause: CauseTarget, Wrong: failing},
			"verdict: FAIL (exit status 8, the target's doing): WRONG ANSWERS: " + failing,
			"<tr><th>answer checks</th><td>5 of 9 judged answers wrong, in 2 of 4 checks (named in the verdict); 3 not judged (table below)</td></tr>"},
		{"wrong answers, ledger not written", checkRows(), RunVerdict{Result: ResultFail, Exit: 7, Cause: CauseProber, Why: "ledger not written: 2 record(s) missing", Wrong: failing},
			"verdict: FAIL (exit status 7, the prober's doing): WRONG ANSWERS: " + failing + "; ledger not written: 2 record(s) missing",
			"<tr><th>answer checks</th><td>5 of 9 judged answers wrong"},
		{"all right", []CheckRow{checkRows()[0], checkRows()[3]}, RunVerdict{Result: ResultPass, Why: "answer checks: 3 judged, all passed (2 not judged)"},
			"verdict: PASS (exit status 0): answer checks: 3 judged, all passed (2 not judged)",
			"<tr><th>gates</th>"},
		{"none judged", checkRows()[3:], RunVerdict{Result: ResultFail, Exit: 3, Cause: CauseTarget, Why: "no request succeeded"},
			"verdict: FAIL (exit status 3, the target's doing): no request succeeded",
			"<tr><th>gates</th>"},
		{"no checks", nil, RunVerdict{Result: ResultPass, Why: "gates met"}, "verdict: PASS (exit status 0): gates met", "<tr><th>gates</th>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := summaries()["open"]
			m := testMeta()
			m.Verdict, m.Checks = &tc.verdict, tc.rows
			var txt, page, js bytes.Buffer
			if err := ProbeText(&txt, s, nil, m); err != nil {
				t.Fatal(err)
			}
			if err := ProbeHTMLWith(&page, s, nil, m); err != nil {
				t.Fatal(err)
			}
			p := ProbeOf(s)
			p.AddMeta(m)
			if err := ProbeJSON(&js, p); err != nil {
				t.Fatal(err)
			}
			wrong := tc.verdict.Wrong != ""

			// Text: the verdict line first, the table last.
			text := txt.String()
			if first, _, _ := strings.Cut(text, "\n"); first != tc.line {
				t.Errorf("text starts %q, want %q", first, tc.line)
			}
			if got := strings.Count(text, WrongAnswers); got != map[bool]int{true: 1}[wrong] {
				t.Errorf("text names %s %d times, want %v", WrongAnswers, got, wrong)
			}
			table := strings.Index(text, ChecksHead)
			if (table >= 0) != (len(tc.rows) > 0) {
				t.Fatalf("checks table at %d with %d rows:\n%s", table, len(tc.rows), text)
			}
			for _, r := range tc.rows {
				row := strings.TrimRight(strings.Join(strings.Fields(
					"  "+r.Check+" "+r.Kind+" "+itoa(r.Runs)+" "+itoa(r.Pass)+" "+itoa(r.Fail)+" "+itoa(r.NotJudged)+" "+r.ReasonsText()), " "), " ")
				found := false
				for _, l := range strings.Split(text[table:], "\n") {
					if strings.Join(strings.Fields(l), " ") == row {
						found = true
					}
				}
				if !found {
					t.Errorf("text table lacks the row %q:\n%s", row, text[table:])
				}
			}

			// HTML: the lead names the wrong answers in the verdict and
			// leads its evidence with them; the table has a row per check,
			// the failing ones marked.
			html := page.String()
			checkHTMLLead(t, tc.name, html, tc.verdict)
			word := `<strong class="wrong">WRONG ANSWERS:</strong> <span class="wrong">` + htmlEscape(tc.verdict.Wrong) + `</span>`
			if strings.Contains(html, word) != wrong || strings.Contains(html, WrongAnswers) != wrong {
				t.Errorf("HTML lead names wrong answers: %v, want %v", strings.Contains(html, word), wrong)
			}
			leadTable := html[strings.Index(html, `<table class="lead">`):]
			if first := strings.TrimPrefix(leadTable, "<table class=\"lead\">\n"); !strings.HasPrefix(first, tc.lead) {
				t.Errorf("HTML lead's evidence starts %.200q, want %q", first, tc.lead)
			}
			if item := "<tr><th>answer checks</th><td>"; strings.Contains(html, item) != (len(tc.rows) > 0) {
				t.Errorf("HTML lead's answer checks row present: %v with %d rows", !(len(tc.rows) > 0), len(tc.rows))
			}
			if strings.Contains(html, "<h2>Answer checks</h2>") != (len(tc.rows) > 0) {
				t.Errorf("HTML checks section present: %v with %d rows", !(len(tc.rows) > 0), len(tc.rows))
			}
			for _, r := range tc.rows {
				cls := ""
				if r.Fail > 0 {
					cls = ` class="failed"`
				}
				reasons := r.ReasonsText()
				if reasons == "" {
					reasons = "-"
				}
				row := "<tr" + cls + `><td class="name">` + r.Check + `</td><td class="name">` + r.Kind + "</td><td>" + itoa(r.Runs) + "</td><td>" +
					itoa(r.Pass) + "</td><td>" + itoa(r.Fail) + "</td><td>" + itoa(r.NotJudged) + `</td><td class="reasons">` + reasons + "</td></tr>"
				if !strings.Contains(html, row) {
					t.Errorf("HTML lacks the row %s", row)
				}
			}

			// JSON: the same rows, the verdict's why as the text's, and
			// wrong_answers set exactly when checks failed.
			var back struct {
				Verdict map[string]any `json:"verdict"`
				Checks  []CheckRow     `json:"checks"`
			}
			if err := json.Unmarshal(js.Bytes(), &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Checks, tc.rows) {
				t.Errorf("JSON checks %+v, want %+v", back.Checks, tc.rows)
			}
			if why, _ := back.Verdict["why"].(string); "verdict: "+tc.verdict.Line() != tc.line || !strings.HasSuffix(tc.line, "): "+why) {
				t.Errorf("JSON why %q, the text's line %q", why, tc.line)
			}
			if got, _ := back.Verdict["wrong_answers"].(bool); got != wrong {
				t.Errorf("JSON verdict.wrong_answers %v, want %v", got, wrong)
			}
			if _, ok := back.Verdict["wrong_answers"]; ok != wrong {
				t.Errorf("JSON verdict.wrong_answers present: %v, want %v", ok, wrong)
			}
			if strings.Contains(js.String(), `"checks"`) != (len(tc.rows) > 0) {
				t.Errorf("JSON carries checks: %v with %d rows", !(len(tc.rows) > 0), len(tc.rows))
			}
		})
	}
}

// htmlEscape is what html/template makes of text in an element.
func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}
