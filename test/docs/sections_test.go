package docs

import (
	"strconv"
	"strings"
	"testing"
)

// repeatableTitles may head a section in several documents: none so far.
// A title added here needs a reason.
var repeatableTitles = map[string]string{}

// No section is written twice: a title (H1 to H3) appears once across the
// README, CONTRIBUTING.md and docs/, so each subject has one home. The
// changelog is left out: its entries repeat their headings by design.
func TestNoSectionTwice(t *testing.T) {
	where := map[string]string{}
	n := 0
	for _, doc := range docFiles(t) {
		if doc == "CHANGELOG.md" {
			continue
		}
		for _, h := range headings(repoFile(t, doc)) {
			if h.level > 3 {
				continue
			}
			n++
			key := strings.ToLower(strings.Trim(anchor(h.title), "-"))
			if _, ok := repeatableTitles[key]; ok {
				continue
			}
			at := doc + ":" + strconv.Itoa(h.line)
			if prev, ok := where[key]; ok {
				t.Errorf("section %q at %s repeats %s: merge them, or give each its own subject", h.title, at, prev)
				continue
			}
			where[key] = at
		}
	}
	if n < 100 {
		t.Errorf("only %d headings found: the pattern is broken", n)
	}
}
