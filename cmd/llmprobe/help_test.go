package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestHelpPages: every command's --help goes to stdout (exit 0, nothing on
// stderr), starts with its synopsis, shows every group of its page with
// every flag the group names (so no group names a flag that does not
// exist), leaves no flag outside a group, and ends with examples that are
// llmprobe commands.
func TestHelpPages(t *testing.T) {
	t.Parallel()
	flagLine := regexp.MustCompile(`(?m)^\s+--([a-z0-9][a-z0-9.-]*)[ \[]`)
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			page, ok := helpPages[c.name]
			if !ok {
				t.Fatalf("no help page for %s", c.name)
			}
			r := invoke(t.Context(), c.name, "--help")
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			out := r.stdout
			if !strings.HasPrefix(out, "usage: llmprobe "+page.usage+"\n") {
				t.Errorf("no synopsis first:\n%s", out)
			}
			if strings.Contains(out, "\n"+ungrouped+":") {
				t.Errorf("flags outside every group:\n%s", out[strings.Index(out, ungrouped):])
			}
			listed := map[string]bool{}
			for _, m := range flagLine.FindAllStringSubmatch(out, -1) {
				if listed[m[1]] {
					t.Errorf("--%s listed twice", m[1])
				}
				listed[m[1]] = true
			}
			last := -1
			for _, g := range page.groups {
				i := strings.Index(out, "\n"+g.title+":\n")
				if i < 0 {
					t.Errorf("no group %q", g.title)
					continue
				}
				if i < last {
					t.Errorf("group %q out of order", g.title)
				}
				last = i
				for _, f := range g.flags {
					if !listed[f] {
						t.Errorf("group %q names --%s, which %s --help does not list (no such flag?)", g.title, f, c.name)
					}
				}
			}
			ex := strings.Index(out, "\nExamples:\n")
			if ex < 0 || ex < last {
				t.Fatalf("no examples after the flags:\n%s", out)
			}
			examples := regexp.MustCompile(`(?m)^  (llmprobe|curl) .*$`).FindAllString(out[ex:], -1)
			if len(examples) == 0 || len(examples) != len(page.examples) {
				t.Errorf("examples %q, want %d", examples, len(page.examples))
			}
			for _, x := range page.examples {
				if strings.HasPrefix(x[1], "llmprobe ") && !strings.HasPrefix(x[1], "llmprobe "+c.name) {
					t.Errorf("example %q is not a %s command", x[1], c.name)
				}
			}
		})
	}
}

// TestHelpExamplesParse: every example of every page is a command line
// whose flags that command accepts (its --help is asked with them: a bad
// flag would exit 2).
func TestHelpExamplesParse(t *testing.T) {
	t.Parallel()
	for name, page := range helpPages {
		for _, x := range page.examples {
			if !strings.HasPrefix(x[1], "llmprobe ") {
				continue
			}
			args := append(strings.Fields(strings.TrimPrefix(x[1], "llmprobe ")), "--help")
			if r := invoke(t.Context(), args...); r.code != 0 {
				t.Errorf("%s: example %q: exit %d: %s", name, x[1], r.code, r.stderr)
			}
		}
	}
}

// TestTopLevelHelp: `llmprobe --help` (stdout, exit 0) lists the commands,
// the exit codes and examples; with no arguments the same usage is a usage
// error (stderr, exit 2).
func TestTopLevelHelp(t *testing.T) {
	t.Parallel()
	r := invoke(t.Context(), "--help")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, c := range commands() {
		if !regexp.MustCompile(`(?m)^  ` + c.name + `  +\S`).MatchString(r.stdout) {
			t.Errorf("command %s not listed:\n%s", c.name, r.stdout)
		}
	}
	for _, want := range []string{"llmprobe --version", "exit codes:", "\nExamples:\n", "llmprobe run --config.file"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in:\n%s", want, r.stdout)
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(r.stdout), "llmprobe run --config.file config.yaml") {
		t.Errorf("help does not end with the examples:\n%s", r.stdout)
	}
	none := invoke(t.Context())
	if none.code != exitUsage || none.stdout != "" || !strings.Contains(none.stderr, "usage: llmprobe") {
		t.Errorf("no arguments: exit %d, stdout %q, stderr %q", none.code, none.stdout, none.stderr)
	}
}
