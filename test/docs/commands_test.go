package docs

import (
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/llmprobe/llmprobe/internal/testutil"
)

// ciScript is .ci/run with its VAR=value assignments expanded and quotes
// dropped, so that a documented command can be looked up in it.
func ciScript(t *testing.T) string {
	t.Helper()
	text := repoFile(t, ".ci/run")
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Z_][A-Z0-9_]*)=([^\s$"']+)$`).FindAllStringSubmatch(text, -1) {
		vars[m[1]] = m[2]
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for _, k := range names {
		text = strings.NewReplacer("${"+k+"}", vars[k], "$"+k, vars[k]).Replace(text)
	}
	return strings.ReplaceAll(text, `"`, "")
}

// ciCommands returns the commands of the first shell block under
// CONTRIBUTING.md's "What CI runs", comments dropped.
func ciCommands(t *testing.T) []string {
	t.Helper()
	text := repoFile(t, "CONTRIBUTING.md")
	i := strings.Index(text, "\n## What CI runs\n")
	if i < 0 {
		t.Fatal(`CONTRIBUTING.md has no "## What CI runs" section`)
	}
	text = text[i+1:]
	if j := strings.Index(text[3:], "\n## "); j >= 0 {
		text = text[:j+3]
	}
	start := strings.Index(text, "```sh\n")
	if start < 0 {
		t.Fatal(`CONTRIBUTING.md, "What CI runs": no shell block`)
	}
	block := text[start+len("```sh\n"):]
	block = block[:strings.Index(block, "```")]
	var cmds []string
	for _, l := range strings.Split(block, "\n") {
		if c, _, _ := strings.Cut(l, " #"); strings.TrimSpace(c) != "" {
			cmds = append(cmds, strings.TrimSpace(c))
		}
	}
	return cmds
}

// The checks CONTRIBUTING.md says CI runs are the ones .ci/run runs,
// including the README's test command.
func TestContributingCommandsInCI(t *testing.T) {
	ci := ciScript(t)
	cmds := ciCommands(t)
	if len(cmds) < 3 {
		t.Fatalf("CONTRIBUTING.md lists %d CI commands: the block is broken", len(cmds))
	}
	for _, c := range cmds {
		if strings.Contains(ci, strings.ReplaceAll(c, `"`, "")) || ciExcused(c) {
			continue
		}
		t.Errorf("CONTRIBUTING.md says CI runs %q; .ci/run does not", c)
	}
	if !strings.Contains(strings.Join(cmds, "\n"), "go test -race -count=1 ./...") {
		t.Error("CONTRIBUTING.md's CI commands leave out the test command")
	}
}

// ciExcused reports a command that aheadOfCode lists as coming to .ci/run.
func ciExcused(cmd string) bool {
	for what := range aheadOfCode {
		if c, ok := strings.CutPrefix(what, "ci "); ok && strings.Contains(cmd, c) {
			return true
		}
	}
	return false
}

var (
	flagsOnce sync.Once
	flagsSet  map[string]bool
)

// llmprobeFlags builds the command and reads every flag of every command
// from its --help.
func llmprobeFlags(t *testing.T) map[string]bool {
	t.Helper()
	bin := llmprobe.Path(t)
	flagsOnce.Do(func() {
		help := func(args ...string) string {
			out, _ := exec.Command(bin, args...).CombinedOutput() // --help exits non-zero
			return string(out)
		}
		flagsSet = map[string]bool{"help": true, "version": true} // on every command, listed on no page
		cmdRE := regexp.MustCompile(`(?m)^  ([a-z]+)  `)
		flagRE := regexp.MustCompile(`(?m)^\s+--([a-z0-9][a-z0-9.-]*)`)
		for _, m := range cmdRE.FindAllStringSubmatch(help("--help"), -1) {
			for _, f := range flagRE.FindAllStringSubmatch(help(m[1], "--help"), -1) {
				flagsSet[f[1]] = true
			}
		}
	})
	if len(flagsSet) < 60 {
		t.Fatalf("only %d flags read from --help: the parsing is broken", len(flagsSet))
	}
	return flagsSet
}

var llmprobe testutil.Binary

func TestMain(m *testing.M) { os.Exit(llmprobe.Main(m)) }

// foreignFlags are flags of other programs the documents show.
var foreignFlags = map[string]string{
	"build":                    "docker compose up --build",
	"from-literal":             "kubectl create secret",
	"web.enable-otlp-receiver": "prometheus",
	"enable-feature":           "prometheus 2.x",
	"force":                    "kubectl delete pod --force",
	"query.replica-label":      "thanos query",
}

var flagSpanRE = regexp.MustCompile(`^--([a-z0-9][a-z0-9.-]*[a-z0-9])(?:[ =].*)?$`)

// Every flag a document writes in backticks (`--max-in-flight`, `--stall
// 10s+5s`) is a flag of some llmprobe command.
func TestFlagsExist(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: builds the binary to read every command's --help")
	}
	flags := llmprobeFlags(t)
	n := 0
	for _, doc := range append(docFiles(t), "deploy/README.md", "alerts/README.md") {
		for _, span := range codeSpans(repoFile(t, doc)) {
			m := flagSpanRE.FindStringSubmatch(span)
			if m == nil {
				continue
			}
			n++
			name := m[1]
			if _, ok := foreignFlags[name]; ok || flags[name] {
				continue
			}
			if strings.HasSuffix(name, "-") || excused("flag --"+name) {
				continue
			}
			t.Errorf("%s: `%s`: no llmprobe command has --%s", doc, span, name)
		}
	}
	if n < 80 {
		t.Errorf("only %d flags found in the docs: the pattern is broken", n)
	}
}
