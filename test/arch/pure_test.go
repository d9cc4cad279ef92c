package arch

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pure are packages that compute and never touch the network: neither
// they nor any package of the project they import (directly or not)
// imports a network package. (A library they use may: expfmt imports
// net/http for content negotiation, not to connect.) stats calls itself
// pure, and holds the server's view through servermetrics, whose scraper
// is apart (servermetrics/scrape).
var pure = []string{"internal/stats", "internal/quantile", "internal/verdict", "internal/cause", "internal/metricdef", "internal/ladderresult", "internal/servermetrics", "internal/schedule", "internal/slo", "internal/ledger"}

// network are the standard packages that open connections.
var network = []string{"net", "net/http", "net/rpc", "net/smtp", "crypto/tls"}

// netImports returns the network packages that pkg's non-test files import.
func netImports(t *testing.T, pkg string) []string {
	t.Helper()
	p, err := build.Default.ImportDir(filepath.Join(root, pkg), 0)
	if err != nil {
		t.Fatalf("%s: %v", pkg, err)
	}
	var out []string
	for _, imp := range p.Imports {
		if slices.Contains(network, imp) {
			out = append(out, imp)
		}
	}
	return out
}

// impure returns, for each package of the project in pkg's import closure
// (pkg included), the network packages it imports.
func impure(t *testing.T, graph map[string][]string, pkg string) map[string][]string {
	t.Helper()
	bad := map[string][]string{}
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		if n := netImports(t, p); len(n) > 0 {
			bad[p] = n
		}
		for _, d := range graph[p] {
			walk(d)
		}
	}
	walk(pkg)
	return bad
}

// TestPurePackagesOpenNoConnection: the pure packages and what they import
// of the project import no network package.
func TestPurePackagesOpenNoConnection(t *testing.T) {
	graph := pkgs(t)
	for _, pkg := range pure {
		if _, ok := graph[pkg]; !ok {
			t.Errorf("%s is listed as pure but is no package: update the list", pkg)
			continue
		}
		for p, n := range impure(t, graph, pkg) {
			t.Errorf("%s is pure, but %s (in its imports) imports %s", pkg, p, strings.Join(n, ", "))
		}
	}
}

// TestPureRuleCatchesTheScraper: the rule sees a network import through
// the project's graph (the test above cannot fail unless this can).
func TestPureRuleCatchesTheScraper(t *testing.T) {
	graph := map[string][]string{"internal/stats": {"internal/servermetrics/scrape"}}
	bad := impure(t, graph, "internal/stats")
	if n := bad["internal/servermetrics/scrape"]; !slices.Contains(n, "net/http") {
		t.Errorf("stats importing the scraper: found %v, want net/http in internal/servermetrics/scrape", bad)
	}
}
