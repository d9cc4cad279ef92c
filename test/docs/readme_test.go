package docs

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pathRE finds repository paths in backticks or link targets.
var pathRE = regexp.MustCompile("(?:`|\\]\\()((?:\\.ci|cmd|config|dashboards|alerts|deploy|docs|internal|test|testdata)/[^`)\\s]*|Dockerfile)")

// goIdent is a Go identifier after a package path.
var goIdent = regexp.MustCompile(`\.[A-Z][A-Za-z0-9_.]*$`)

// Every repository path the documents and the deploy and alert notes
// mention exists.
func TestMentionedFilesExist(t *testing.T) {
	docs := append(docFiles(t), "deploy/README.md", "alerts/README.md")
	for _, doc := range docs {
		text := repoFile(t, doc)
		n := 0
		for _, m := range pathRE.FindAllStringSubmatch(text, -1) {
			p := m[1]
			if strings.Contains(p, "*") && !strings.ContainsAny(p, "<>…{}$") {
				if m, _ := filepath.Glob(repoPath(p)); len(m) == 0 {
					t.Errorf("%s mentions %s: nothing matches", doc, p)
				}
				continue
			}
			if strings.ContainsAny(p, "<>*…{}$") || strings.Contains(p, "...") {
				continue // a placeholder, not a file
			}
			p = strings.SplitN(p, "#", 2)[0] // a link's anchor is checked by TestLinksResolve
			p = strings.TrimSuffix(strings.SplitN(p, ":", 2)[0], ".")
			p = goIdent.ReplaceAllString(p, "") // internal/telemetry.Recorder names a package
			if !exists(p) && !excused("file "+p) {
				t.Errorf("%s mentions %s, which does not exist", doc, p)
			}
			n++
		}
		if doc == "README.md" && n < 20 {
			t.Errorf("README.md: only %d paths found: the pattern is broken", n)
		}
	}
}

// The README opens with the run command, the test command (the full tier)
// and the fast tier's; .ci/run runs that same full test command, never the
// fast tier.
func TestReadmeOpensWithCommands(t *testing.T) {
	readme := repoFile(t, "README.md")
	start := strings.Index(readme, "```sh\n")
	if start < 0 || start > 200 {
		t.Fatal("README.md does not open with a shell block")
	}
	block := readme[start+len("```sh\n"):]
	block = block[:strings.Index(block, "```")]
	lines := strings.Split(strings.TrimSpace(block), "\n")
	if len(lines) != 3 {
		t.Fatalf("README.md opens with %d commands, want 3 (run, test, fast tier)", len(lines))
	}
	cmd := func(l string) string { return strings.TrimSpace(strings.SplitN(l, "#", 2)[0]) }
	if run := cmd(lines[0]); run != "go run ./cmd/llmprobe run" {
		t.Errorf("first command %q, want the daemon on its built-in default", run)
	}
	testCmd := cmd(lines[1])
	if !strings.HasPrefix(testCmd, "go test") {
		t.Fatalf("second command %q is not the test command", testCmd)
	}
	if strings.Contains(testCmd, "-short") {
		t.Errorf("second command %q: the test command is the full tier, without -short", testCmd)
	}
	ci := repoFile(t, ".ci/run")
	if !strings.Contains(ci, "\n"+testCmd+"\n") {
		t.Errorf(".ci/run does not run the README's test command %q", testCmd)
	}
	if fast := cmd(lines[2]); !strings.HasPrefix(fast, "go test") || !strings.Contains(fast, " -short") {
		t.Errorf("third command %q, want the fast tier (go test -short)", fast)
	}
	if strings.Contains(ci, "-short") {
		t.Errorf(".ci/run runs a -short test: CI runs the full tier")
	}
}

// maxReadmeLines keeps the README something a newcomer reads in fifteen
// minutes; the reference lives under docs/.
const maxReadmeLines = 300

func TestReadmeLength(t *testing.T) {
	readme := repoFile(t, "README.md")
	if n := strings.Count(readme, "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, at most %d: move reference material to docs/", n, maxReadmeLines)
	}
}

// The README's /probe scrape job is the first job of
// docs/probe-endpoint.md's scrape configuration, word for word: that one
// is run by a real Prometheus in test/integration (TestProbeEndpointPrometheus),
// so the README's copy is proven with it.
func TestReadmeProbeScrapeConfigIsTheTestedOne(t *testing.T) {
	yamlBlock := func(doc, after string) string {
		text := repoFile(t, doc)
		i := strings.Index(text, after)
		if i < 0 {
			t.Fatalf("%s: no %q", doc, after)
		}
		_, block, ok := strings.Cut(text[i:], "```yaml\n")
		if !ok {
			t.Fatalf("%s: no yaml block after %q", doc, after)
		}
		block, _, _ = strings.Cut(block, "```")
		return block
	}
	readme := yamlBlock("README.md", "through `/probe` as it does through blackbox_exporter")
	if !strings.Contains(readme, "metrics_path: /probe") || !strings.Contains(readme, "relabel_configs:") {
		t.Fatalf("README.md's /probe block has no /probe job with relabel_configs:\n%s", readme)
	}
	tested := yamlBlock("docs/probe-endpoint.md", "## The Prometheus scrape configuration")
	if !strings.HasPrefix(tested, readme) {
		t.Errorf("README.md's /probe scrape job differs from the first job of docs/probe-endpoint.md (the one a real Prometheus runs in the tests):\nREADME:\n%s\ndocs:\n%s", readme, tested)
	}
}
