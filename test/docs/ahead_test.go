package docs

import (
	"strings"
	"testing"
)

// Every aheadOfCode entry still names something missing: once the code
// has it, the entry must go, so the docs are checked against it.
func TestAheadOfCodeStillAhead(t *testing.T) {
	_, _, known := configKeys(t)
	ci := ciScript(t)
	var flags map[string]bool
	for what, why := range aheadOfCode {
		kind, name, _ := strings.Cut(what, " ")
		var there bool
		switch kind {
		case "file":
			there = exists(name)
		case "key":
			there = keyKnown(known, name)
		case "ci":
			there = strings.Contains(ci, name)
		case "flag":
			if flags == nil {
				flags = llmprobeFlags(t)
			}
			there = flags[strings.TrimPrefix(name, "--")]
		default:
			t.Errorf("aheadOfCode %q: unknown kind %q", what, kind)
			continue
		}
		if there {
			t.Errorf("%s exists now (%s): remove it from aheadOfCode", what, why)
		}
	}
}
