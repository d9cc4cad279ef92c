package arch

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the import graph block of docs/ARCHITECTURE.md")

const (
	root   = "../.."
	module = "github.com/llmprobe/llmprobe"
	// testSupport is the rank of test support: internal/testutil and test/*.
	testSupport = 100
)

// ranks places every package (its path in the module): a package imports
// only packages of a strictly lower rank, so same-rank packages never
// import each other (protocol does not import dispatch). Data flows up:
// schedule → dispatch → protocol → ledger → verdict/stats/telemetry/report →
// ladder → daemon/admin → commands. config describes and sits apart (see
// importRules): wiring is where it meets the domain. A new package must be
// placed here.
var ranks = map[string]int{
	// 0: leaves (import nothing of the project, except sim's importers below)
	"internal/sanitize": 0, "internal/schedule": 0, "internal/protocol/sse": 0, "internal/protocol/h1": 0, "internal/logging": 5, "internal/durfmt": 0,
	"internal/slo": 0, "internal/sim": 0, "internal/answercheck": 0, "deploy": 0, "internal/urlprefix": 0,
	"internal/cause": 0, "internal/quantile": 0, "internal/metricdef": 0,
	// 10: the record
	"internal/ledger": 10, "internal/servermetrics": 10, "internal/dashgen": 10,
	// 15: the verdicts on a generator (validity, host evidence, saturation)
	"internal/verdict": 15,
	// 20: sending and summarising
	"internal/dispatch": 20, "internal/protocol": 20, "internal/protocol/replay": 20, "internal/stats": 20,
	"internal/servermetrics/scrape": 20,
	// 25: the ladder result model and its schema
	"internal/ladderresult": 25,
	// 30: what a run is made of
	"internal/workload": 30, "internal/hostload": 30, "internal/budget": 30, "internal/telemetry": 30, "internal/report": 30,
	// 40: the ladder
	"internal/ladder": 40,
	// 42: a fleet of probers as one (above ladder: it drives and judges
	// ladders; below config: wiring builds it)
	"internal/fleet": 42,
	// 45: the description (imports rank 0 only; imported from rank 50 up)
	"internal/config": 45,
	// 50: where the configuration meets the domain; the admin server
	"internal/wiring": 50, "internal/admin": 50,
	// 55: the handlers the daemon hands to admin as http.Handlers: the /probe
	// endpoint (built on wiring) and the status page (built from the daemon's view)
	"internal/probehandler": 55, "internal/statuspage": 55,
	// 60: the daemon
	"internal/daemon": 60,
	// 70: commands
	"cmd/llmprobe": 70, "internal/dashgen/cmd/dashgen": 70,
	// test support
	"internal/testutil": testSupport,
}

// importRules narrow "any lower rank" for some packages. (config at 45 is
// imported only from rank 50 up, and testutil only by test support, by
// their ranks alone.)
var importRules = []struct {
	pkg  string
	rule string
	// ok reports whether importer may import pkg (non-test files).
	ok func(importer string) bool
}{
	{"internal/sim", "sim is imported only by cmd/llmprobe (and test support)",
		func(imp string) bool { return imp == "cmd/llmprobe" || rankOf(imp) == testSupport }},
}

// importsAtMost caps what a package imports: config imports nothing of
// the domain (rank 0 only) but the owners of the values it is made of
// (valueOwners).
var importsAtMost = map[string]int{"internal/config": 0}

// valueOwners are the packages above rank 0 whose value types config is
// written in, each parsing and checking itself (UnmarshalText): a stop
// rule (ladder.StopAt), a length distribution and a prompt source
// (workload.DistSpec, workload.PromptSpec), a TTFT boundary
// (ledger.TTFTBoundary), a server flavour (servermetrics.Flavour), a
// class's latency gates (stats.Gates, durations read by config's Duration
// rule). config uses their types, not their machinery.
var valueOwners = map[string]bool{"internal/ladder": true, "internal/workload": true,
	"internal/ledger": true, "internal/servermetrics": true, "internal/stats": true}

func rankOf(pkg string) int {
	if strings.HasPrefix(pkg, "test/") {
		return testSupport
	}
	if r, ok := ranks[pkg]; ok {
		return r
	}
	return -1
}

// pkgs returns every package directory of the module (relative path) with
// its non-test imports inside the module.
func pkgs(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor" || name == "node_modules") {
			return filepath.SkipDir
		}
		p, err := build.Default.ImportDir(path, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(p.GoFiles)+len(p.TestGoFiles)+len(p.XTestGoFiles) == 0 {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		var deps []string
		for _, imp := range p.Imports {
			if dep, ok := strings.CutPrefix(imp, module+"/"); ok {
				deps = append(deps, dep)
			}
		}
		sort.Strings(deps)
		out[rel] = deps
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("found only %d packages under %s", len(out), root)
	}
	return out
}

// violations lists every import against the rank table.
func violations(graph map[string][]string) []string {
	var bad []string
	for _, pkg := range sortedKeys(graph) {
		r := rankOf(pkg)
		if r < 0 {
			bad = append(bad, fmt.Sprintf("%s: not placed in the rank table (test/arch/imports_test.go): a new package must be placed", pkg))
			continue
		}
		for _, dep := range graph[pkg] {
			dr := rankOf(dep)
			switch {
			case dr < 0:
				bad = append(bad, fmt.Sprintf("%s → %s: %s is not placed in the rank table", pkg, dep, dep))
			case dr >= r && r != testSupport:
				bad = append(bad, fmt.Sprintf("%s (rank %d) → %s (rank %d): imports go down only (data flows the other way)", pkg, r, dep, dr))
			case importsAtMost[pkg] < dr && hasKey(importsAtMost, pkg) && !(pkg == "internal/config" && valueOwners[dep]):
				bad = append(bad, fmt.Sprintf("%s → %s: %s imports rank %d at most (it describes; it does not import the domain)", pkg, dep, pkg, importsAtMost[pkg]))
			}
			for _, rule := range importRules {
				if dep == rule.pkg && !rule.ok(pkg) {
					bad = append(bad, fmt.Sprintf("%s → %s: %s", pkg, dep, rule.rule))
				}
			}
		}
	}
	return bad
}

func hasKey[V any](m map[string]V, k string) bool { _, ok := m[k]; return ok }

func sortedKeys[V any](m map[string]V) []string {
	out := mapsKeys(m)
	sort.Strings(out)
	return out
}

func mapsKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestImportsFollowTheData: every package is placed in the rank table and
// imports only what the table allows.
func TestImportsFollowTheData(t *testing.T) {
	for _, v := range violations(pkgs(t)) {
		t.Error(v)
	}
}

// TestRulesCatchWrongImports: the rules refuse each kind of wrong edge
// (the test above cannot fail unless these can).
func TestRulesCatchWrongImports(t *testing.T) {
	for _, tc := range []struct {
		graph map[string][]string
		want  string
	}{
		{map[string][]string{"internal/protocol": {"internal/dispatch"}}, "imports go down only"},
		{map[string][]string{"internal/ledger": {"internal/stats"}}, "imports go down only"},
		{map[string][]string{"internal/config": {"internal/protocol"}}, "imports rank 0 at most"},
		{map[string][]string{"internal/ladder": {"internal/config"}}, "(rank 40) → internal/config (rank 45): imports go down only"},
		{map[string][]string{"internal/daemon": {"internal/sim"}}, "sim is imported only by cmd/llmprobe"},
		{map[string][]string{"internal/daemon": {"internal/testutil"}}, "→ internal/testutil (rank 100): imports go down only"},
		{map[string][]string{"internal/newthing": nil}, "a new package must be placed"},
	} {
		v := violations(tc.graph)
		if len(v) != 1 || !strings.Contains(v[0], tc.want) {
			t.Errorf("%v: violations %q, want one saying %q", tc.graph, v, tc.want)
		}
	}
	if v := violations(map[string][]string{"test/chaos": {"internal/sim", "internal/testutil", "internal/config"}, "cmd/llmprobe": {"internal/sim", "internal/wiring"}, "internal/config": {"internal/ladder", "internal/workload", "internal/schedule"}}); len(v) != 0 {
		t.Errorf("allowed edges refused: %q", v)
	}
}

// TestConfigLoadedThroughWiring: outside internal/config itself, only
// internal/wiring (and tests) call config.Load or config.LoadWith, so every
// loaded configuration has had the domain's checks.
func TestConfigLoadedThroughWiring(t *testing.T) {
	var bad []string
	for pkg := range pkgs(t) {
		if pkg == "internal/config" || pkg == "internal/wiring" || rankOf(pkg) == testSupport {
			continue
		}
		files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			bad = append(bad, configLoads(t, f)...)
		}
	}
	for _, b := range bad {
		t.Errorf("%s: load the configuration with wiring.Load (it adds the domain's checks)", b)
	}
}

// configLoads returns "file:line" of every config.Load/LoadWith call in f.
func configLoads(t *testing.T, f string) []string {
	t.Helper()
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	name := ""
	for _, imp := range af.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == module+"/internal/config" {
			name = "config"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return nil
	}
	var out []string
	ast.Inspect(af, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == name && (sel.Sel.Name == "Load" || sel.Sel.Name == "LoadWith") {
			rel, _ := filepath.Rel(root, f)
			out = append(out, fmt.Sprintf("%s:%d: config.%s", filepath.ToSlash(rel), fset.Position(sel.Pos()).Line, sel.Sel.Name))
		}
		return true
	})
	return out
}

func TestConfigLoadsFound(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "x.go")
	src := "package x\n\nimport cfg \"" + module + "/internal/config\"\n\nvar _, _ = cfg.Load(\"\", nil)\n"
	if err := os.WriteFile(f, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := configLoads(t, f); len(got) != 1 || !strings.Contains(got[0], "config.Load") {
		t.Errorf("config.Load under another name not found: %v", got)
	}
}

const (
	beginGraph = "<!-- BEGIN IMPORTS (go test ./test/arch -update) -->"
	endGraph   = "<!-- END IMPORTS -->"
)

// graphBlock is the import graph as docs/ARCHITECTURE.md shows it: one
// line per package, by rank, with what it imports. Test support (rank T:
// internal/testutil and test/*) is outside the layering and not drawn, so
// a new test package does not change the page.
func graphBlock(graph map[string][]string) string {
	var names []string
	for n := range graph {
		if rankOf(n) != testSupport {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := rankOf(names[i]), rankOf(names[j])
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	var b bytes.Buffer
	b.WriteString("```\n")
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		rank := strconv.Itoa(rankOf(n))
		deps := "(nothing of the project)"
		if len(graph[n]) > 0 {
			short := make([]string, len(graph[n]))
			for i, d := range graph[n] {
				short[i] = strings.TrimPrefix(d, "internal/")
			}
			deps = "→ " + strings.Join(short, " ")
		}
		fmt.Fprintf(&b, "%-3s %-*s %s\n", rank, width, n, deps)
	}
	b.WriteString("```\n")
	return b.String()
}

// TestArchitectureDoc: docs/ARCHITECTURE.md shows the real import graph
// (generated: go test ./test/arch -update) and its package table names
// every package.
func TestArchitectureDoc(t *testing.T) {
	path := filepath.Join(root, "docs", "ARCHITECTURE.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, beginGraph), strings.Index(doc, endGraph)
	if i < 0 || j < i {
		t.Fatalf("%s: no %q … %q block", path, beginGraph, endGraph)
	}
	graph := pkgs(t)
	want := graphBlock(graph)
	got := doc[i+len(beginGraph)+1 : j]
	if got != want {
		if *update {
			doc = doc[:i+len(beginGraph)+1] + want + doc[j:]
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Errorf("%s: the import graph is stale; run go test ./test/arch -update\ngot:\n%s\nwant:\n%s", path, got, want)
		}
	}
	// Every package has a row of the package table ("| `internal/x` |";
	// "| `test/*` |" covers every test package).
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	rows := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		rows[m[1]] = true
	}
	for _, pkg := range sortedKeys(graph) {
		if rows[pkg] || (strings.HasPrefix(pkg, "test/") && rows["test/*"]) {
			continue
		}
		t.Errorf("%s: no row for %s in the package table", path, pkg)
	}
}
