package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/llmprobe/llmprobe/internal/durfmt"
)

// CheckRow is one answer check's results in a probe's report (probe
// --checks): the check's configured name and kind, how many of its
// requests ended, how many of those were judged right (Pass) or wrong
// (Fail, by reason), and how many were not judged (their request did not
// end ok). It carries no answer text: names come from the configuration,
// reasons from answercheck's closed set (the command counts any other as
// "other"). The JSON shape is `checks` in probe --json.
type CheckRow struct {
	Check     string         `json:"check"`
	Kind      string         `json:"kind"`
	Runs      int            `json:"runs"`
	Pass      int            `json:"pass"`
	Fail      int            `json:"fail"`
	Reasons   map[string]int `json:"fail_reasons,omitempty"`
	NotJudged int            `json:"not_judged"`
}

// Judged is the row's runs that were judged: pass + fail.
func (r CheckRow) Judged() int { return r.Pass + r.Fail }

// ReasonsText is a row's failure reasons, most frequent first:
// "mismatch 3, schema 1" ("" without failures).
func (r CheckRow) ReasonsText() string { return durfmt.Counts(r.Reasons, "%s %d") }

// FailedChecks are the rows of checks that were judged and failed at
// least once, in the order given: the wrong answers a verdict names
// (RunVerdict.Wrong). nil when none failed.
func FailedChecks(rows []CheckRow) []CheckRow {
	var out []CheckRow
	for _, r := range rows {
		if r.Fail > 0 {
			out = append(out, r)
		}
	}
	return out
}

// FailedChecksText names each failing check with its failures against its
// judged runs (not judged ones left out, as the status page counts them)
// and their reasons: "add failed 2 of 3 (mismatch 2); schema failed 1 of 1
// (invalid_json 1)". Rows without failures are left out.
func FailedChecksText(rows []CheckRow) string {
	var parts []string
	for _, r := range FailedChecks(rows) {
		parts = append(parts, fmt.Sprintf("%s failed %d of %d (%s)", r.Check, r.Fail, r.Judged(), r.ReasonsText()))
	}
	return strings.Join(parts, "; ")
}

// checksTotals sums rows: judged, passed, failed and not judged.
func checksTotals(rows []CheckRow) (judged, pass, fail, notJudged int) {
	for _, r := range rows {
		judged += r.Judged()
		pass += r.Pass
		fail += r.Fail
		notJudged += r.NotJudged
	}
	return
}

// checksLead is the HTML lead's line for a probe's checks: how many
// judged answers were wrong in how many checks (the verdict above names
// them), else how many were judged and passed.
func checksLead(rows []CheckRow) string {
	judged, pass, fail, notJudged := checksTotals(rows)
	switch {
	case fail > 0:
		return fmt.Sprintf("%d of %d judged answers wrong, in %d of %d checks (named in the verdict); %d not judged (table below)",
			fail, judged, len(FailedChecks(rows)), len(rows), notJudged)
	case judged == 0:
		return fmt.Sprintf("%d checks, none judged (%d not judged: their requests did not end ok; table below)", len(rows), notJudged)
	}
	return fmt.Sprintf("%d checks: %d judged, all %d right, %d not judged (table below)", len(rows), judged, pass, notJudged)
}

// ChecksHead explains the checks table's columns.
const ChecksHead = "answer checks (pass: the answer was right; fail: wrong; not judged: the request did not end ok)"

// ChecksText writes a probe's checks table (after its text report):
// check, kind, runs, pass, fail, not judged and the failure reasons.
// Nothing when rows is empty.
func ChecksText(w io.Writer, rows []CheckRow) error {
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("\n" + ChecksHead + "\n")
	fmt.Fprintf(&b, "  %-24s %-10s %5s %5s %5s %10s  %s\n", "check", "kind", "runs", "pass", "fail", "not_judged", "fail reasons")
	for _, r := range rows {
		line := fmt.Sprintf("  %-24s %-10s %5d %5d %5d %10d  %s", r.Check, r.Kind, r.Runs, r.Pass, r.Fail, r.NotJudged, r.ReasonsText())
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: writing checks: %w", err)
	}
	return nil
}

// checkHTMLRow is a checks table row of the probe's HTML page.
type checkHTMLRow struct {
	CheckRow
	ReasonsCell string // ReasonsText, "-" without failures
	Failed      bool
}

// checksHTMLRows are rows for the page's table.
func checksHTMLRows(rows []CheckRow) []checkHTMLRow {
	out := make([]checkHTMLRow, 0, len(rows))
	for _, r := range rows {
		h := checkHTMLRow{CheckRow: r, ReasonsCell: r.ReasonsText(), Failed: r.Fail > 0}
		if h.ReasonsCell == "" {
			h.ReasonsCell = "-"
		}
		out = append(out, h)
	}
	return out
}
