package workload

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func mustPrefixGen(t *testing.T, spec PrefixSpec, seed, nonce uint64) *PrefixGen {
	t.Helper()
	g, err := NewPrefixGen(spec, seed, nonce)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

var testPrefixSpec = PrefixSpec{PrefixTokens: 1000, Groups: 4, Choice: GroupUniform, SuffixTokens: 50}

// TestPrefixGenDeterministic: the same seed and run nonce give the same
// prompts call for call; another seed other group prefixes; another run
// nonce other cold prefixes but the same group prefixes.
func TestPrefixGenDeterministic(t *testing.T) {
	run := func(seed, nonce uint64) (shared, cold []PrefixPrompt) {
		g := mustPrefixGen(t, testPrefixSpec, seed, nonce)
		for range 20 {
			shared = append(shared, g.Shared())
			cold = append(cold, g.Cold())
		}
		return shared, cold
	}
	s1, c1 := run(7, 99)
	s2, c2 := run(7, 99)
	if !reflect.DeepEqual(s1, s2) || !reflect.DeepEqual(c1, c2) {
		t.Fatal("same seed and nonce, different prompts")
	}
	s3, _ := run(8, 99)
	if s3[0].Messages[0].Content == s1[0].Messages[0].Content {
		t.Error("another seed gave the same group prefix")
	}
	s4, c4 := run(7, 100)
	for i := range s1 {
		if s4[i].Group != s1[i].Group || s4[i].Messages[0] != s1[i].Messages[0] {
			t.Fatalf("request %d: another run nonce changed the shared prefix or its group", i)
		}
		if c4[i].Messages[0].Content == c1[i].Messages[0].Content {
			t.Fatalf("request %d: another run nonce gave the same cold prefix", i)
		}
	}
}

// TestPrefixGenLengths: every prefix and suffix is exactly its length in
// tokens of the workload's estimate (CharsPerToken characters each), and a
// cold twin's lengths are the shared request's.
func TestPrefixGenLengths(t *testing.T) {
	for _, spec := range []PrefixSpec{
		{PrefixTokens: 8, Groups: 1, Choice: GroupRoundRobin, SuffixTokens: 8},
		{PrefixTokens: 1000, Groups: 3, Choice: GroupZipf, ZipfS: 1.2, SuffixTokens: 37},
		{PrefixTokens: 4096, Groups: 2, Choice: GroupUniform, SuffixTokens: 500},
	} {
		g := mustPrefixGen(t, spec, 1, 2)
		for i := range 10 {
			for _, p := range []PrefixPrompt{g.Shared(), g.Cold()} {
				m := p.Messages
				if len(m) != 2 || m[0].Role != "system" || m[1].Role != "user" {
					t.Fatalf("messages %d: want system then user", len(m))
				}
				if got := len(m[0].Content); got != spec.PrefixTokens*CharsPerToken {
					t.Errorf("%+v request %d (cold %v): prefix %d chars, want %d", spec, i, p.Cold(), got, spec.PrefixTokens*CharsPerToken)
				}
				if got := len(m[1].Content); got != spec.SuffixTokens*CharsPerToken {
					t.Errorf("%+v request %d: suffix %d chars, want %d", spec, i, got, spec.SuffixTokens*CharsPerToken)
				}
			}
		}
	}
}

// TestPrefixGenGroups: requests of a group share its prefix exactly; the
// groups' prefixes differ within their first 9 characters; and the choice
// rules pick groups as documented.
func TestPrefixGenGroups(t *testing.T) {
	g := mustPrefixGen(t, PrefixSpec{PrefixTokens: 100, Groups: 3, Choice: GroupRoundRobin, SuffixTokens: 10}, 1, 2)
	byGroup := map[int]string{}
	var order []int
	for range 9 {
		p := g.Shared()
		order = append(order, p.Group)
		if prev, ok := byGroup[p.Group]; ok && prev != p.Messages[0].Content {
			t.Fatalf("group %d sent two prefixes", p.Group)
		}
		byGroup[p.Group] = p.Messages[0].Content
	}
	if !reflect.DeepEqual(order, []int{0, 1, 2, 0, 1, 2, 0, 1, 2}) {
		t.Errorf("round robin order %v", order)
	}
	heads := map[string]bool{}
	for _, pre := range byGroup {
		heads[pre[:9]] = true
	}
	if len(heads) != 3 {
		t.Errorf("group prefixes share their first 9 characters: %v", heads)
	}

	counts := func(choice GroupChoice) []int {
		g := mustPrefixGen(t, PrefixSpec{PrefixTokens: 8, Groups: 5, Choice: choice, ZipfS: 1.5, SuffixTokens: 8}, 3, 4)
		c := make([]int, 5)
		for range 5000 {
			c[g.Shared().Group]++
		}
		return c
	}
	for k, n := range counts(GroupUniform) { // 1000 expected each; the seed is fixed
		if n < 850 || n > 1150 {
			t.Errorf("uniform: group %d drawn %d times of 5000", k, n)
		}
	}
	z := counts(GroupZipf)
	for k := 1; k < len(z); k++ {
		if z[k] >= z[k-1] {
			t.Errorf("zipf counts %v: not decreasing with the group number", z)
			break
		}
	}
	if z[0] < 5000/3 {
		t.Errorf("zipf counts %v: group 0 is not the hot prefix", z)
	}
}

// TestColdTwinsShareNothing: no cold prefix shares its first 9 characters
// with another cold prefix of the run, nor its first character with a
// group prefix, a synthetic prompt or a cache-bust prompt; so in a
// simulated block cache (64-character blocks, 16 tokens) no block of a
// cold prompt is any other prompt's block, while the shared requests of a
// group share all their prefix blocks.
func TestColdTwinsShareNothing(t *testing.T) {
	spec := PrefixSpec{PrefixTokens: 64, Groups: 4, Choice: GroupRoundRobin, SuffixTokens: 8}
	g := mustPrefixGen(t, spec, 5, 0xfeed)
	const n = 20000
	heads := map[string]bool{}
	blocks := map[string]int{} // block chain key (the text up to the block's end) → prompts holding it
	addBlocks := func(text string) {
		for end := 64; end <= len(text); end += 64 {
			blocks[text[:end]]++
		}
	}
	var cold []string
	for i := range n {
		c := g.Cold().Messages[0].Content
		if heads[c[:9]] {
			t.Fatalf("cold prefix %d repeats an earlier one's first 9 characters %q", i, c[:9])
		}
		heads[c[:9]] = true
		cold = append(cold, c)
		addBlocks(c)
		if i%100 == 0 {
			addBlocks(g.Shared().Messages[0].Content)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	others := []string{SyntheticText(r, 64), "[0123456789abcdef-1] " + SyntheticText(r, 64)}
	for range spec.Groups {
		others = append(others, g.Shared().Messages[0].Content)
	}
	for _, o := range others {
		addBlocks(o)
		if strings.HasPrefix(o, "~") {
			t.Errorf("a prompt that is no cold twin starts with the cold mark: %.20q", o)
		}
	}
	for i, c := range cold {
		if blocks[c[:64]] != 1 {
			t.Fatalf("cold prefix %d: its first block is held by %d prompts", i, blocks[c[:64]])
		}
	}
	shared := g.Shared().Messages[0].Content
	if blocks[shared[:64]] < 2 || blocks[shared] < 2 {
		t.Error("the shared prefix's blocks are not shared: the check above proves nothing")
	}
}

func TestPrefixSpecValidate(t *testing.T) {
	ok := PrefixSpec{PrefixTokens: 100, Groups: 2, Choice: GroupZipf, ZipfS: 1.1, SuffixTokens: 10}
	with := func(f func(*PrefixSpec)) PrefixSpec { s := ok; f(&s); return s }
	tests := []struct {
		spec PrefixSpec
		key  string
	}{
		{with(func(s *PrefixSpec) { s.PrefixTokens = 7 }), "prefix_tokens"},
		{with(func(s *PrefixSpec) { s.SuffixTokens = MaxPrefixPartTokens + 1 }), "suffix_tokens"},
		{with(func(s *PrefixSpec) { s.Groups = 0 }), "groups"},
		{with(func(s *PrefixSpec) { s.Groups = 10_000; s.PrefixTokens = 10_000 }), "groups × prefix_tokens"},
		{with(func(s *PrefixSpec) { s.ZipfS = 1 }), "zipf_s"},
		{with(func(s *PrefixSpec) { s.Choice = "sticky" }), "group choice"},
	}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid spec: %v", err)
	}
	for _, tt := range tests {
		if _, err := NewPrefixGen(tt.spec, 1, 1); err == nil || !strings.Contains(err.Error(), tt.key) {
			t.Errorf("%+v: %v, want an error naming %s", tt.spec, err, tt.key)
		}
	}
}
