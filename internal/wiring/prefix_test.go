package wiring

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dashgen"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// TestPrefixConfigErrors: every shared-prefix mistake is refused in one
// pass, each at its own key, placed FILE:LINE:COL in the file.
func TestPrefixConfigErrors(t *testing.T) {
	p := write(t, `targets:
  - name: t1
    url: http://127.0.0.1:8000/v1
    model: m
    classes:
      - name: chat
        prefix: {tokens: 1000}
      - name: chat-cold
      - name: big
        prefix: {tokens: 1000, groups: 20000}
        cache_bust_fraction: 0.5
      - name: pick
        prefix: {tokens: 4, choice: sometimes}
      - name: file
        prompt: {source: file, file: /nonexistent}
        prefix: {tokens: 100}
      - name: plain
        cold_twin: {weight: 2}
      - name: halfway
        prefix: {groups: 3}
      - name: zipfy
        prefix: {tokens: 100, choice: zipf, zipf_s: 0.5}
        cold_twin: {weight: -1}
      - name: a-name-of-exactly-sixty-characters-which-leaves-no-room-abcd
        prefix: {tokens: 100}
`)
	_, err := Load(config.Options{Path: p, Environ: noEnv})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, w := range []string{
		p + ":8:9: targets[0].classes[1].name: \"chat-cold\" is the name of the cold twin generated for the shared-prefix class \"chat\" (classes[0])",
		p + ":11:9: targets[0].classes[2].cache_bust_fraction: a shared-prefix class is never cache busted",
		p + ":10:32: targets[0].classes[2].prefix.groups: groups 20000 must be in 1..10000",
		p + ":13:18: targets[0].classes[3].prefix.tokens: prefix_tokens 4 must be in 8..1000000",
		p + ":15:18: targets[0].classes[4].prompt.source: a shared-prefix class generates its prompts",
		p + ":18:21: targets[0].classes[5].cold_twin.weight: only a shared-prefix class (prefix.tokens) has a cold twin",
		p + ":20:9: targets[0].classes[6].prefix.tokens: required (above 0) when other prefix keys are set",
		"targets[0].classes[7].prefix.zipf_s: zipf_s 0.5 must be a number above 1",
		"targets[0].classes[7].cold_twin.weight: want 0 (the class's weight) or above, got -1",
		"targets[0].classes[8].name: \"a-name-of-exactly-sixty-characters-which-leaves-no-room-abcd\" is too long for a shared-prefix class",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in:\n%v", w, err)
		}
	}
	// The choice is refused by workload's parser (after the tokens' range, one error per class).
	c, err := Load(config.Options{BuiltIn: []byte(minimal + "    classes: [{name: c, prefix: {tokens: 100, choice: sometimes}}]\n"), Environ: noEnv})
	if err == nil || !strings.Contains(err.Error(), `targets[0].classes[0].prefix.choice: group choice "sometimes": want round_robin, uniform or zipf`) {
		t.Errorf("a bad choice: %v %v", c, err)
	}
}

// TestColdTwins: each shared-prefix class gets its twin "<name>-cold"
// after the configured classes (which keep their indexes), with the
// class's gates and output, its weight or cold_twin.weight, and request by
// request the class's own lengths; the shared requests cycle through the
// groups' fixed prefixes, deterministically from the seed, and no cold
// prefix is shared with anything the target sends.
func TestColdTwins(t *testing.T) {
	tg := loadTarget(t, `    baseline: {seed: 9}
    classes:
      - name: chat
        weight: 3
        prefix: {tokens: 200, groups: 3}
        input: {dist: uniform, min: 10, max: 50}
        output: {dist: uniform, min: 5, max: 9}
        gates: {ttft: 2s}
      - name: plain
      - name: agent
        prefix: {tokens: 100, choice: zipf}
        cold_twin: {weight: 0.5}
`)
	plan, err := NewPlan(tg, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	var names []string
	for _, c := range plan.Classes {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "chat plain agent chat-cold agent-cold" {
		t.Fatalf("classes %s", got)
	}
	cl := plan.Classes
	if cl[3].Weight != 3 || cl[4].Weight != 0.5 || cl[3].Gates != cl[0].Gates || cl[3].Gates.TTFT == 0 {
		t.Errorf("twins' weights %g %g, gates %+v vs %+v", cl[3].Weight, cl[4].Weight, cl[3].Gates, cl[0].Gates)
	}
	if cl[0].Prompt.Kind() != workload.KindSharedPrefix || cl[3].Prompt.Kind() != workload.KindColdTwin || cl[1].Prompt.Kind() != "synthetic" {
		t.Errorf("sources %s %s %s", cl[0].Prompt.Kind(), cl[3].Prompt.Kind(), cl[1].Prompt.Kind())
	}
	if !IsColdTwin(tg, 3) || IsColdTwin(tg, 2) || MixIndex(tg, 3) != 0 || MixIndex(tg, 4) != 2 || MixIndex(tg, 1) != 1 {
		t.Error("twin indexes")
	}
	if got := PrefixPairs(tg); len(got) != 2 || got["chat"] != "chat-cold" || got["agent"] != "agent-cold" {
		t.Errorf("pairs %v", got)
	}

	seen := map[string]string{} // the first 64 characters (a 16-token block) of every prefix → who sent it
	groups := map[string]bool{}
	for i := range 30 {
		s := plan.Params(0)(&ledger.Record{})
		c := plan.Params(3)(&ledger.Record{})
		if len(s.Messages) != 2 || len(c.Messages) != 2 || s.Messages[0].Role != "system" {
			t.Fatalf("request %d: messages %d, %d", i, len(s.Messages), len(c.Messages))
		}
		if len(s.Messages[0].Content) != 800 || len(c.Messages[0].Content) != 800 {
			t.Errorf("request %d: prefixes of %d and %d characters, want 800", i, len(s.Messages[0].Content), len(c.Messages[0].Content))
		}
		if len(s.Messages[1].Content) != len(c.Messages[1].Content) || s.MaxTokens != c.MaxTokens {
			t.Errorf("request %d: suffix %d vs twin %d characters, max_tokens %d vs %d", i, len(s.Messages[1].Content), len(c.Messages[1].Content), s.MaxTokens, c.MaxTokens)
		}
		if n := len(s.Messages[1].Content) / workload.CharsPerToken; n < 10 || n > 50 {
			t.Errorf("request %d: suffix of %d tokens, want the input distribution's 10..50", i, n)
		}
		groups[s.Messages[0].Content[:64]] = true
		a := plan.Params(2)(&ledger.Record{})
		ac := plan.Params(4)(&ledger.Record{})
		for who, text := range map[string]string{"chat-cold": c.Messages[0].Content, "agent-cold": ac.Messages[0].Content} {
			if prev, dup := seen[text[:9]]; dup {
				t.Fatalf("cold prefix of %s shares its first 9 characters with %s's", who, prev)
			}
			seen[text[:9]] = who
		}
		if a.Messages[0].Content[0] != '^' || c.Messages[0].Content[0] != '~' {
			t.Errorf("markers %q %q", a.Messages[0].Content[:1], c.Messages[0].Content[:1])
		}
	}
	if len(groups) != 3 {
		t.Errorf("%d distinct shared prefixes, want the 3 groups", len(groups))
	}
	// Deterministic from the seed: a second plan sends the same groups in the same order.
	again, err := NewPlan(tg, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	p1, p2 := plan.Params(0)(&ledger.Record{}), again.Params(0)(&ledger.Record{})
	if p1.Messages[0].Content != p2.Messages[0].Content {
		// plan has sent 30 (round robin over 3: group 0 next), again none (group 0).
		t.Error("the 31st request of one plan and the 1st of another name different groups")
	}
}

// TestColdTwinSuffixOfTheRules: the recording rules and the dashboard
// (dashgen, which cannot import config) pair class X with the twin config
// generates for it.
func TestColdTwinSuffixOfTheRules(t *testing.T) {
	if got, want := config.ColdTwinName("chat"), "chat"+dashgen.ColdSuffix; got != want {
		t.Errorf("config names the cold twin %q, the rules pair %q", got, want)
	}
}
