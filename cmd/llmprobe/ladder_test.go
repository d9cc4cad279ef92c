package main

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ladder"
)

// ladderArgs is a short ladder against the built-in simulator. On a loaded
// machine a step may be judged generator-invalid (dispatch lag), which
// aborts the ladder after that step (exit 4): the tests accept that, as
// long as it is reported.
var ladderCodes = []int{exitOK, exitGeneratorInvalid}

var ladderArgs = []string{"ladder", "--steps", "5,10", "--step-duration", "2s", "--gap", "200ms",
	"--max-tokens", "8", "--arrival", "constant"}

// TestLadderTextSVGHTML: the step table on stdout, an SVG that parses as
// XML and an HTML page whose embedded chart parses too, and a history line.
func TestLadderTextSVGHTML(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a whole ladder in real time for each output format (TestLadderJSON runs one in both tiers)")
	}
	t.Parallel()
	svgPath, htmlPath, histPath := tempPath(t, "l.svg"), tempPath(t, "l.html"), tempPath(t, "h.jsonl")
	res := mustExit(t, ladderCodes, append(ladderArgs, "--svg", svgPath, "--html", htmlPath, "--history", histPath)...)

	if !strings.Contains(res.stdout, "OPEN LOOP") {
		t.Errorf("step table does not say OPEN LOOP:\n%s", res.stdout)
	}
	if !regexp.MustCompile(`(?m)^\s*step\s+rate\s+planned\s+dispatched\s+unsent\s+ok\b`).MatchString(res.stdout) {
		t.Fatalf("no step table header:\n%s", res.stdout)
	}
	rows := regexp.MustCompile(`(?m)^\s+(\d+)\s+(\d+(?:\.\d+)?)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s`).FindAllStringSubmatch(res.stdout, -1)
	if len(rows) == 0 {
		t.Fatalf("no step rows:\n%s", res.stdout)
	}
	for i, r := range rows {
		step, _ := strconv.Atoi(r[1])
		planned, _ := strconv.Atoi(r[3])
		dispatched, _ := strconv.Atoi(r[4])
		unsent, _ := strconv.Atoi(r[5])
		if step != i+1 || r[2] != []string{"5", "10"}[i] {
			t.Errorf("row %d: step %s rate %s", i, r[1], r[2])
		}
		if planned != dispatched+unsent || planned < 5 {
			t.Errorf("step %d: planned %d, dispatched %d, unsent %d", step, planned, dispatched, unsent)
		}
	}
	if len(rows) < 2 && !strings.Contains(res.stdout, "aborted") {
		t.Errorf("only %d step(s) and no abort reported:\n%s", len(rows), res.stdout)
	}
	if !strings.Contains(res.stdout, "capacity:") {
		t.Errorf("no capacity line:\n%s", res.stdout)
	}

	svg, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	if root := parseXML(t, "SVG file", string(svg)); root != "svg" {
		t.Errorf("SVG root element %q, want svg", root)
	}

	page, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	if !strings.HasPrefix(html, "<!DOCTYPE html>") || !strings.Contains(html, "</html>") || !strings.Contains(html, "<table") {
		t.Errorf("HTML report is not a complete page with a table")
	}
	start, end := strings.Index(html, "<svg"), strings.LastIndex(html, "</svg>")
	if start < 0 || end < start {
		t.Fatal("HTML report embeds no SVG chart")
	}
	parseXML(t, "SVG in the HTML page", html[start:end+len("</svg>")])
	if strings.Contains(html, "<script") {
		t.Error("HTML report runs scripts: it should be self-contained static markup")
	}

	f, err := os.Open(histPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	lines := 0
	for sc.Scan() {
		lines++
		var l ladder.Result
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("history line %d: %v", lines, err)
		}
		if len(l.Steps) != len(rows) {
			t.Errorf("history has %d steps, the table %d", len(l.Steps), len(rows))
		}
	}
	if lines != 1 {
		t.Errorf("history file has %d lines, want 1", lines)
	}
}

// parseXML decodes s to its end and returns the root element's name.
func parseXML(t *testing.T, what, s string) string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(s))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s does not parse as XML: %v", what, err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	return root
}

// TestLadderJSON: --json prints one object in the ladder result's schema,
// the same result its history line holds (one type, the same figures),
// with consistent counts per step, and its gates are the --slo-ttft given
// (not a zero beside the right class gates).
func TestLadderJSON(t *testing.T) {
	t.Parallel()
	histPath := filepath.Join(t.TempDir(), "history.jsonl")
	res := mustExit(t, ladderCodes, append(ladderArgs, "--json", "--slo-ttft", "30s", "--history", histPath)...)
	var l ladder.Result
	dec := json.NewDecoder(strings.NewReader(res.stdout))
	if err := dec.Decode(&l); err != nil {
		t.Fatalf("ladder --json: %v\n%s", err, res.stdout)
	}
	if dec.More() {
		t.Error("ladder --json printed more than one JSON value")
	}
	if !strings.Contains(res.stdout, `"schema_version": 2`) || !strings.Contains(res.stdout, `"gates": {
    "ttft": 30,`) {
		t.Errorf("ladder --json --slo-ttft 30s: want schema_version 2 and gates with TTFT 30 s:\n%s", res.stdout)
	}
	hist, skipped, err := ladder.ReadHistory(histPath, 0)
	if err != nil || skipped != 0 || len(hist) != 1 {
		t.Fatalf("history: %d lines, %d skipped, %v", len(hist), skipped, err)
	}
	if !reflect.DeepEqual(hist[0], l) {
		t.Errorf("the history line and --json differ:\n%+v\n%+v", hist[0], l)
	}
	if len(l.Steps) == 0 || len(l.Steps) > 2 {
		t.Fatalf("%d steps, want 1 or 2", len(l.Steps))
	}
	// The one-shot ladder's identity is the model the simulator's answers
	// name, first seen during step 1; every step ended on it.
	if l.Identity.Model == "" || l.Partial != "" {
		t.Errorf("ladder --json: identity %+v, partial %q: want the served model and a complete ladder", l.Identity, l.Partial)
	}
	for _, s := range l.Steps {
		if s.IdentityEnd != l.Identity {
			t.Errorf("step %d ended on %+v, the ladder measured %+v", s.Index, s.IdentityEnd, l.Identity)
		}
	}
	if len(l.Steps) < 2 && !l.Aborted {
		t.Errorf("ladder ran %d of 2 steps but is not marked aborted", len(l.Steps))
	}
	for i, s := range l.Steps {
		if s.Index != i+1 || s.Rate != []float64{5, 10}[i] {
			t.Errorf("step %d: index %d rate %v", i+1, s.Index, s.Rate)
		}
		sum := 0
		m := s.Summary
		for _, n := range m.Outcomes.ByOutcome {
			sum += n
		}
		if m.Planned != m.Dispatched+m.Unsent || sum != m.Planned {
			t.Errorf("step %d: planned %d, dispatched %d, unsent %d, outcomes sum %d", s.Index, m.Planned, m.Dispatched, m.Unsent, sum)
		}
		if m.Outcomes.ByOutcome["ok"] != m.TTFT.Count || m.Completed != m.TTFT.Count {
			t.Errorf("step %d: %d ok but %d TTFT samples", s.Index, m.Outcomes.ByOutcome["ok"], m.TTFT.Count)
		}
	}
}
