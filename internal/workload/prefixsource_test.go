package workload

import (
	"testing"
)

// TestPrefixTwinAndSource: a Twin shares the group prefixes but draws
// from a stream and numbers of its own, so a class's shared sequence does
// not depend on its twin's calls; lanes keep the cold prefixes of several
// twins apart; a source's suffix is the drawn input length, at least
// MinPrefixPartTokens.
func TestPrefixTwinAndSource(t *testing.T) {
	spec := PrefixSpec{PrefixTokens: 64, Groups: 2, Choice: GroupUniform, SuffixTokens: 8}
	a, b := mustPrefixGen(t, spec, 1, 2), mustPrefixGen(t, spec, 1, 2)
	ta := a.Twin(7, 0, 2)
	tb := b.Twin(7, 1, 2)
	seen := map[string]int{}
	for i := range 50 {
		ta.Cold() // a's twin called between a's shared requests, b's not at all
		if x, y := a.Shared(), b.Shared(); x.Group != y.Group || x.Messages[1].Content != y.Messages[1].Content {
			t.Fatalf("request %d: the twin's calls changed the class's sequence", i)
		}
		for lane, g := range []*PrefixGen{ta, tb} {
			head := g.Cold().Messages[0].Content[:9]
			if prev, dup := seen[head]; dup {
				t.Fatalf("lane %d: a cold prefix shares its first 9 characters with lane %d's", lane, prev)
			}
			seen[head] = lane
		}
	}
	if ta.prefixes[1] != a.prefixes[1] || &ta.prefixes[0] != &a.prefixes[0] {
		t.Error("a twin does not share its class's group prefixes")
	}
	src, cold := SharedSource(a), ColdSource(ta)
	for _, c := range []struct{ in, want int }{{20, 20}, {3, MinPrefixPartTokens}} {
		for _, s := range []PrefixSource{src, cold} {
			m := s.Messages(nil, c.in)
			if len(m) != 2 || len(m[0].Content) != 64*CharsPerToken || len(m[1].Content) != c.want*CharsPerToken {
				t.Errorf("%s, input %d: %d messages, suffix %d characters, want %d", s.Kind(), c.in, len(m), len(m[1].Content), c.want*CharsPerToken)
			}
		}
	}
	if s := cold.String(); s != "cold_twin(prefix 64 tokens, 2 groups, uniform)" {
		t.Errorf("String %q", s)
	}
}
