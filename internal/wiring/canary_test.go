package wiring

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/budget"
	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/workload"
)

const canaryClasses = `    budget: {requests_per_day: 3}
    classes:
      - name: chat
        weight: 3
      - name: canary
        record_answers: excerpt
        checks:
          - {name: add, prompt: "What is 2 + 3? Reply with the number only.", max_tokens: 8, expect: {text: "5"}}
          - {name: count, prompt: "Count from 1 to 50, separated by single spaces. Reply with the numbers only.", max_tokens: 5, length: {}}
`

// TestCanaryPlan: a canary class's prompt stream is its checks in
// rotation, each with the target's model, its own max_tokens and the
// class's record_answers, while the other classes keep their prompts.
func TestCanaryPlan(t *testing.T) {
	tg := loadTarget(t, canaryClasses)
	p, err := NewPlan(tg, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if len(p.Classes) != 2 || p.Classes[1].Name != "canary" {
		t.Fatalf("classes %+v", p.Classes)
	}
	if prm := p.Params(0)(&ledger.Record{}); prm.Check != nil || prm.MaxTokens != 128 {
		t.Errorf("plain class sends a check %v or max_tokens %d", prm.Check, prm.MaxTokens)
	}
	want := []struct {
		name string
		max  int
	}{{"add", 8}, {"count", 5}, {"add", 8}, {"count", 5}}
	for i, w := range want {
		prm := p.Params(1)(&ledger.Record{})
		if prm.Check == nil || prm.Check.Name != w.name || prm.MaxTokens != w.max || prm.Model != "m" || !prm.RecordExcerpt {
			t.Errorf("canary request %d: check %v, max_tokens %d, model %q, excerpt %v; want %s, %d, m, true",
				i+1, prm.Check, prm.MaxTokens, prm.Model, prm.RecordExcerpt, w.name, w.max)
		}
	}
	// The daily estimate counts the checks' own lengths.
	u, err := ExpectedUsage(tg, 0)
	if err != nil {
		t.Fatal(err)
	}
	if wantOut := (3*128 + 1*6.5) / 4; u.Output < wantOut-0.01 || u.Output > wantOut+0.01 {
		t.Errorf("expected output tokens per request %.2f, want %.2f (the canary's mean max_tokens at its weight)", u.Output, wantOut)
	}
}

// TestCanaryBudget: check requests go through the budget as any request:
// admitted against requests_per_day, bounded by their prompt and
// max_tokens, charged when they finish; the fourth is refused.
func TestCanaryBudget(t *testing.T) {
	tg := loadTarget(t, canaryClasses)
	p, err := NewPlan(tg, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !p.Limited {
		t.Fatal("budget not planned")
	}
	b := budget.New(p.Budget, func() time.Time { return time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC) })
	for id := uint64(1); id <= 3; id++ {
		rec := &ledger.Record{ID: id, Class: "canary", Traffic: ledger.TrafficBaseline}
		if _, ok := b.Admit(rec); !ok {
			t.Fatalf("check request %d refused within the budget", id)
		}
		prm := p.Params(1)(rec)
		bound := workload.UsageBound(prm)
		if bound < int64(prm.MaxTokens)+1 {
			t.Errorf("check %s bound %d, below its max_tokens %d + its prompt", prm.Check.Name, bound, prm.MaxTokens)
		}
		b.Bound(id, bound)
		rec.Dispatched = time.Millisecond
		rec.Outcome, rec.Reason = ledger.OK, ""
		rec.Usage = ledger.Usage{Invalid: true} // a server whose usage cannot be true: charged the bound
		if got := b.Charge(rec); got != bound {
			t.Errorf("check request %d charged %d, want its bound %d", id, got, bound)
		}
	}
	if r := b.Remaining(); r.Requests != 0 {
		t.Errorf("requests left %d after 3 check requests of 3", r.Requests)
	}
	if _, ok := b.Admit(&ledger.Record{ID: 4, Class: "canary"}); ok {
		t.Error("a fourth check request admitted past requests_per_day 3")
	}
}

// TestCanaryAPI: a check the target's API cannot send is refused with its
// file and key.
func TestCanaryAPI(t *testing.T) {
	for _, tc := range []struct{ api, check, key string }{
		{"openai-completions", "{name: t, prompt: p, tool_call: {expect: w, tools: [{name: w, parameters: {type: object}}]}}", "checks[0].tool_call: the target's api openai-completions has no tools"},
		{"openai-responses", "{name: s, prompt: p, stop: {sequences: [x]}}", "checks[0].stop: the target's api openai-responses has no stop sequences"},
	} {
		path := write(t, minimal+"    api: "+tc.api+"\n    classes:\n      - name: c\n        checks: ["+tc.check+"]\n")
		_, err := Load(config.Options{Path: path, Environ: noEnv})
		if err == nil || !strings.Contains(unplaced(err), path+": targets[0].classes[0]."+tc.key) {
			t.Errorf("%s: error %v, want %s", tc.api, err, tc.key)
		}
	}
	for _, api := range []string{"openai-chat", "anthropic-messages"} {
		body := minimal + "    api: " + api + "\n    classes:\n      - name: c\n        checks: [{name: s, prompt: p, stop: {sequences: [x]}}, {name: t, prompt: p, tool_call: {expect: w, tools: [{name: w, parameters: {type: object}}]}}]\n"
		if _, err := Load(config.Options{BuiltIn: []byte(body), Environ: noEnv}); err != nil {
			t.Errorf("%s: stop and tool_call checks refused: %v", api, err)
		}
	}
}
