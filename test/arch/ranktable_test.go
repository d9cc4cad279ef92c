package arch

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// rankTableHeader opens docs/ARCHITECTURE.md's rank table: one row per
// rank, its packages (generated from ranks by go test ./test/arch -update)
// and a sentence on what the rank holds (written by hand).
const rankTableHeader = "| rank | packages | what |"

// rankLabel is a rank as the table writes it: test support is "T".
func rankLabel(r int) string {
	if r == testSupport {
		return "T"
	}
	return strconv.Itoa(r)
}

// shortName is a package as the table writes it: internal/ dropped.
func shortName(pkg string) string { return strings.TrimPrefix(pkg, "internal/") }

// rankCells returns, for each rank of the ranks table, the packages cell
// the doc must show: its packages' short names, sorted, each in backticks
// (test support adds `test/*`, every package under test/).
func rankCells() map[string]string {
	byRank := map[string][]string{}
	for pkg, r := range ranks {
		byRank[rankLabel(r)] = append(byRank[rankLabel(r)], shortName(pkg))
	}
	byRank[rankLabel(testSupport)] = append(byRank[rankLabel(testSupport)], "test/*")
	cells := map[string]string{}
	for label, names := range byRank {
		sort.Strings(names)
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = "`" + n + "`"
		}
		cells[label] = strings.Join(quoted, ", ")
	}
	return cells
}

// rankRow is one row of the doc's rank table.
type rankRow struct {
	line             int // index into the doc's lines
	rank, pkgs, what string
}

// parseRankTable finds the rank table in doc: the rows after its header
// and separator, up to the first line that is not a row.
func parseRankTable(doc string) ([]string, []rankRow, error) {
	lines := strings.Split(doc, "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == rankTableHeader {
			start = i + 2 // header, then |---|---|---|
			break
		}
	}
	if start < 0 || start > len(lines) {
		return lines, nil, fmt.Errorf("no rank table (a %q header)", rankTableHeader)
	}
	var rows []rankRow
	for i := start; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
		cells := strings.Split(strings.Trim(strings.TrimSpace(lines[i]), "|"), " | ")
		if len(cells) != 3 {
			return lines, nil, fmt.Errorf("line %d: %d cells, want rank | packages | what", i+1, len(cells))
		}
		rows = append(rows, rankRow{line: i, rank: strings.TrimSpace(cells[0]), pkgs: strings.TrimSpace(cells[1]), what: strings.TrimSpace(cells[2])})
	}
	return lines, rows, nil
}

// rankTableDiffs compares the doc's rows with the cells of the ranks
// table: every rank has one row, in order, with exactly its packages.
func rankTableDiffs(rows []rankRow, want map[string]string) []string {
	var bad []string
	seen := map[string]bool{}
	prev := -1
	for _, row := range rows {
		w, ok := want[row.rank]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("rank %s: no package has this rank in test/arch", row.rank))
		case seen[row.rank]:
			bad = append(bad, fmt.Sprintf("rank %s: two rows", row.rank))
		case row.pkgs != w:
			bad = append(bad, fmt.Sprintf("rank %s: the doc lists %s; test/arch places %s", row.rank, row.pkgs, w))
		}
		seen[row.rank] = true
		r := testSupport
		if row.rank != "T" {
			r, _ = strconv.Atoi(row.rank)
		}
		if r <= prev {
			bad = append(bad, fmt.Sprintf("rank %s: rows out of order", row.rank))
		}
		prev = r
	}
	labels := mapsKeys(want)
	sort.Strings(labels)
	for _, label := range labels {
		if !seen[label] {
			bad = append(bad, fmt.Sprintf("rank %s (%s): no row (add one, with what the rank holds)", label, want[label]))
		}
	}
	return bad
}

// TestRankTableDoc: docs/ARCHITECTURE.md's rank table places every package
// where the ranks table above does (go test ./test/arch -update rewrites
// its packages column; the "what" column is written by hand).
func TestRankTableDoc(t *testing.T) {
	path := filepath.Join(root, "docs", "ARCHITECTURE.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines, rows, err := parseRankTable(string(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	want := rankCells()
	bad := rankTableDiffs(rows, want)
	if len(bad) == 0 {
		return
	}
	if *update {
		for _, row := range rows {
			if w, ok := want[row.rank]; ok {
				lines[row.line] = fmt.Sprintf("| %s | %s | %s |", row.rank, w, row.what)
			}
		}
		_, rows, _ = parseRankTable(strings.Join(lines, "\n"))
		bad = rankTableDiffs(rows, want)
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range bad {
		t.Errorf("%s: rank table: %s (go test ./test/arch -update rewrites the packages column)", path, d)
	}
}

// TestRankTableDiffsCatch: the comparison above refuses each kind of
// disagreement (it cannot pass on a wrong table).
func TestRankTableDiffsCatch(t *testing.T) {
	want := map[string]string{"0": "`a`, `b`", "10": "`c`", "T": "`testutil`, `test/*`"}
	good := []rankRow{{rank: "0", pkgs: "`a`, `b`"}, {rank: "10", pkgs: "`c`"}, {rank: "T", pkgs: "`testutil`, `test/*`"}}
	if d := rankTableDiffs(good, want); len(d) != 0 {
		t.Fatalf("a right table refused: %q", d)
	}
	for _, tc := range []struct {
		name string
		rows []rankRow
		want string
	}{
		{"package at the wrong rank", []rankRow{{rank: "0", pkgs: "`a`"}, {rank: "10", pkgs: "`b`, `c`"}, {rank: "T", pkgs: "`testutil`, `test/*`"}}, "the doc lists `a`; test/arch places `a`, `b`"},
		{"package missing", []rankRow{{rank: "0", pkgs: "`a`, `b`"}, {rank: "10", pkgs: ""}, {rank: "T", pkgs: "`testutil`, `test/*`"}}, "rank 10: the doc lists ;"},
		{"rank missing", []rankRow{{rank: "0", pkgs: "`a`, `b`"}, {rank: "T", pkgs: "`testutil`, `test/*`"}}, "rank 10 (`c`): no row"},
		{"rank unknown", append(append([]rankRow{}, good...), rankRow{rank: "99", pkgs: "`z`"}), "rank 99: no package has this rank"},
		{"out of order", []rankRow{{rank: "10", pkgs: "`c`"}, {rank: "0", pkgs: "`a`, `b`"}, {rank: "T", pkgs: "`testutil`, `test/*`"}}, "rank 0: rows out of order"},
	} {
		d := rankTableDiffs(tc.rows, want)
		found := false
		for _, s := range d {
			found = found || strings.Contains(s, tc.want)
		}
		if !found {
			t.Errorf("%s: diffs %q, want one saying %q", tc.name, d, tc.want)
		}
	}
	// The real ranks table gives every package a cell, test support "T".
	cells := rankCells()
	if !strings.Contains(cells["T"], "`test/*`") || !strings.Contains(cells["0"], "`sanitize`") || !strings.Contains(cells["70"], "`cmd/llmprobe`") {
		t.Errorf("rankCells: %q", cells)
	}
}
