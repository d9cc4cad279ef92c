package docs

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var update = flag.Bool("update", false, "rewrite the generated blocks of the docs")

// root is the repository root, relative to this package.
var root = filepath.Join("..", "..")

func repoPath(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(repoPath(rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(rel string) bool {
	_, err := os.Stat(repoPath(rel))
	return err == nil
}

// docFiles are the documents every docs test reads: the README, the
// contributor notes, the changelog and every Markdown file under docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "CONTRIBUTING.md", "CHANGELOG.md"}
	matches, err := filepath.Glob(repoPath("docs/*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(matches) < 10 {
		t.Fatalf("only %d files under docs/: the glob is broken", len(matches))
	}
	for _, m := range matches {
		files = append(files, "docs/"+filepath.Base(m))
	}
	sort.Strings(files[3:])
	return files
}

// aheadOfCode lists what the documents describe before the code on this
// branch has it: issue 11's parts A (wiring, keys, flags) and B (metrics
// reference, CI checks) and the chaos suite land separately. An entry
// excuses the thing only while it is missing: TestAheadOfCodeStillAhead
// fails once it exists, so nothing stays excused.
var aheadOfCode = map[string]string{}

// excused reports whether a missing thing is listed in aheadOfCode.
func excused(what string) bool {
	_, ok := aheadOfCode[what]
	return ok
}

// prose returns text with fenced code blocks blanked out (line count kept),
// so that code examples are not read as headings or links.
func prose(text string) string {
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// heading is one ATX heading of a document.
type heading struct {
	level int
	title string
	line  int
}

var headingRE = regexp.MustCompile(`^(#{1,6})\s+(.+?)\s*#*\s*$`)

func headings(text string) []heading {
	var hs []heading
	for i, l := range strings.Split(prose(text), "\n") {
		if m := headingRE.FindStringSubmatch(l); m != nil {
			hs = append(hs, heading{level: len(m[1]), title: m[2], line: i + 1})
		}
	}
	return hs
}

// anchor is GitHub's anchor for a heading: lower case, every character but
// letters, digits, spaces, hyphens and underscores dropped, spaces to
// hyphens.
func anchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the anchors of a document's headings, with GitHub's -1, -2
// suffixes for repeated ones.
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, h := range headings(text) {
		a := anchor(h.title)
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

var codeSpanRE = regexp.MustCompile("`([^`\n]+)`")

// codeSpans returns the inline code spans of a document's prose.
func codeSpans(text string) []string {
	var out []string
	for _, m := range codeSpanRE.FindAllStringSubmatch(prose(text), -1) {
		out = append(out, m[1])
	}
	return out
}
