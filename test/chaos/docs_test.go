package chaos

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the case table in docs/chaos.md from the case table in code")

const (
	docPath   = "../../docs/chaos.md"
	beginMark = "<!-- BEGIN CASE TABLE: generated from test/chaos/cases_test.go by `go test ./test/chaos -run TestCaseTableDoc -update`; do not edit by hand -->"
	endMark   = "<!-- END CASE TABLE -->"
)

// issueList is the list of behaviours issue 8 asks the suite to cover at
// least; every one must be some case's covers.
var issueList = []string{
	"refused", "accept-and-never-answer", "headers then silence", "1 byte/s drip", "keep-alive comments forever",
	"content forever", "10 MB event", "invalid JSON", "in-band error mid-stream", "200 text/html", "200 JSON error body",
	"500 with a 50 MB body", "gzip-encoded SSE", "broken chunked encoding", "short Content-Length", "RST mid-stream",
	"redirect loop", "redirect to another origin", "status 101", "status 999", "non-UTF-8 bytes", "control characters",
	"usage negative", "usage int64 max", "usage float", "20 KB finish reason", "20,000 choices",
	"Anthropic unclosed block", "Anthropic missing start event", "Responses unclosed block", "Responses missing start event",
	"infinite headers", "infinite 1xx", "TLS untrusted certificate", "HTTP/2 RST_STREAM",
	"server echoing the key into every field", "non-UTF-8 identity header", "server closing idle keep-alive connections",
}

// minCases is the least number of hostile behaviours (the healthy control
// case not counted).
const minCases = 40

// TestCaseTableCovers asserts the case table covers every behaviour the
// issue lists, with at least minCases hostile behaviours, uniquely named.
func TestCaseTableCovers(t *testing.T) {
	all := cases()
	names := map[string]bool{}
	covered := map[string]bool{}
	hostile := 0
	for _, c := range all {
		if names[c.name] {
			t.Errorf("case %s: duplicate name", c.name)
		}
		names[c.name] = true
		if c.name != "healthy" {
			hostile++
		}
		if c.covers != "" {
			covered[c.covers] = true
		}
		if len(c.want) == 0 || c.what == "" {
			t.Errorf("case %s: no expected outcome or no description", c.name)
		}
		if (c.kind == plainServer) != (c.serve != nil) || (c.kind == h2Server) != (c.h2 != nil) {
			t.Errorf("case %s: its server kind and its behaviour disagree", c.name)
		}
		if (c.check == nil) != (c.also == "") {
			t.Errorf("case %s: a check needs its description (also) for the docs, and the other way round", c.name)
		}
	}
	for _, item := range issueList {
		if !covered[item] {
			t.Errorf("no case covers %q", item)
		}
	}
	for item := range covered {
		found := false
		for _, want := range issueList {
			found = found || want == item
		}
		if !found {
			t.Errorf("a case covers %q, which is not in the issue's list", item)
		}
	}
	if hostile < minCases {
		t.Errorf("%d hostile behaviours, want at least %d", hostile, minCases)
	}
}

// caseTable renders the case table as Markdown.
func caseTable() string {
	var b strings.Builder
	b.WriteString("| # | case | what the server does | API | every request ends | also asserted |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for i, c := range cases() {
		name := "`" + c.name + "`"
		var tags []string
		if c.covers != "" {
			tags = append(tags, c.covers)
		}
		if c.defect != 0 {
			tags = append(tags, fmt.Sprintf("defect %d", c.defect))
		}
		switch {
		case c.probeOnly:
			tags = append(tags, "probe only")
		case c.noPhase:
			tags = append(tags, "not a phase of the long-running daemon")
		}
		if len(tags) > 0 {
			name += " (" + strings.Join(tags, "; ") + ")"
		}
		ends := make([]string, len(c.want))
		for j, w := range c.want {
			ends[j] = "`" + w.String() + "`"
		}
		end := strings.Join(ends, " or ")
		if c.all && len(c.want) > 1 {
			end += " (each at least once)"
		}
		what := c.what
		switch c.kind {
		case tlsUntrusted, h2Server:
			what += " (its own TLS server)"
		}
		if to := c.timeouts(); to != defaultTimeouts {
			what += fmt.Sprintf("; timeouts: headers %v, first content %v, idle %v, total %v", to.headers, to.firstContent, to.idle, to.total)
		}
		if c.rate() != (&chaosCase{}).rate() {
			what += fmt.Sprintf("; %g req/s", c.rate())
			if c.daemonRate() != c.rate() {
				what += fmt.Sprintf(" (the daemon %g req/s)", c.daemonRate())
			}
		}
		if c.budget > 0 {
			what += fmt.Sprintf("; the daemon's target has a %d-token daily budget", c.budget)
		}
		also := c.also
		if c.identity {
			if also != "" {
				also += "; "
			}
			also += "the daemon polls `GET /models` (identity) in this case's phase"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", i+1, name, cell(what), c.apiName(), end, cell(also))
	}
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// TestCaseTableDoc keeps the case table in docs/chaos.md equal to the one in
// code (-update rewrites it).
func TestCaseTableDoc(t *testing.T) {
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("%s: %v", docPath, err)
	}
	doc := string(b)
	i, j := strings.Index(doc, beginMark), strings.Index(doc, endMark)
	if i < 0 || j < i {
		t.Fatalf("%s: no case table between %q and %q", docPath, beginMark, endMark)
	}
	want := doc[:i+len(beginMark)] + "\n" + caseTable() + doc[j:]
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the case table differs from the one in test/chaos/cases_test.go; run `go test ./test/chaos -run TestCaseTableDoc -update`", docPath)
}
