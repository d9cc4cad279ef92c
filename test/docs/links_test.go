package docs

import (
	"path"
	"regexp"
	"strings"
	"testing"
)

// linkRE finds inline Markdown links: [text](target).
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link of the documents resolves: to a file of the
// repository and, with an #anchor into a Markdown file, to one of its
// headings.
func TestLinksResolve(t *testing.T) {
	anchorsOf := map[string]map[string]bool{}
	anchorsIn := func(rel string) map[string]bool {
		if a, ok := anchorsOf[rel]; ok {
			return a
		}
		a := anchors(repoFile(t, rel))
		anchorsOf[rel] = a
		return a
	}
	n := 0
	for _, doc := range append(docFiles(t), "deploy/README.md", "alerts/README.md") {
		text := codeSpanRE.ReplaceAllString(prose(repoFile(t, doc)), "``")
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			n++
			file, frag, _ := strings.Cut(target, "#")
			rel := doc
			if file != "" {
				rel = path.Clean(path.Join(path.Dir(doc), file))
				if strings.HasPrefix(rel, "../") {
					t.Errorf("%s: link %s leaves the repository", doc, target)
					continue
				}
				if !exists(rel) {
					if !excused("file " + rel) {
						t.Errorf("%s: link %s: %s does not exist", doc, target, rel)
					}
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(rel, ".md") {
				continue
			}
			if !anchorsIn(rel)[frag] {
				t.Errorf("%s: link %s: %s has no heading with anchor #%s", doc, target, rel, frag)
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d relative links found: the pattern is broken", n)
	}
}
