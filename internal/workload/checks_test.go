package workload

import (
	"sync"
	"testing"

	"github.com/llmprobe/llmprobe/internal/answercheck"
)

func canaryChecks() []answercheck.Check {
	return []answercheck.Check{
		{Name: "add", Prompt: "What is 2 + 3? Reply with the number only.", MaxTokens: 8, Expect: &answercheck.Expect{Text: "5"}},
		{Name: "model", Messages: []answercheck.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}},
			Model: &answercheck.Model{Name: "m"}},
		{Name: "json", Prompt: "JSON please", JSON: &answercheck.JSONCheck{Schema: map[string]any{"type": "object"}}},
	}
}

// TestCanaryRotation: a canary class's requests are its checks in
// rotation by request number, each in its own request shape, whatever
// else the class says.
func TestCanaryRotation(t *testing.T) {
	checks := canaryChecks()
	m, err := NewMix(1, []Class{{Name: "canary", Weight: 1, Checks: checks, RecordExcerpt: true, OutputLen: Fixed{999}, CacheBustFraction: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for n := range 3 * len(checks) {
		req := m.Next()
		want := &checks[n%len(checks)]
		p := req.Params
		if p.Check != want {
			t.Fatalf("request %d sends check %v, want %s (round robin)", n+1, p.Check, want.Name)
		}
		if !p.RecordExcerpt || req.CacheBusted || req.Class != "canary" {
			t.Errorf("request %d: excerpt %v, cache busted %v, class %q", n+1, p.RecordExcerpt, req.CacheBusted, req.Class)
		}
		wantMax := want.MaxTokens
		if wantMax == 0 {
			wantMax = answercheck.DefaultMaxTokens
		}
		if p.MaxTokens != wantMax {
			t.Errorf("check %s: max_tokens %d, want %d (the check's, never the class's output)", want.Name, p.MaxTokens, wantMax)
		}
		switch want.Name {
		case "model":
			if len(p.Messages) != 2 || p.Messages[0].Role != "system" || p.Messages[1].Content != "Hi" {
				t.Errorf("check model: messages %+v", p.Messages)
			}
		default:
			if len(p.Messages) != 1 || p.Messages[0].Role != "user" || p.Messages[0].Content != want.Prompt {
				t.Errorf("check %s: messages %+v", want.Name, p.Messages)
			}
		}
	}
}

// TestCanaryRotationConcurrent: concurrent callers together send every
// check equally often (the rotation follows the mix's request numbers).
func TestCanaryRotationConcurrent(t *testing.T) {
	checks := canaryChecks()
	m, err := NewMix(1, []Class{{Name: "canary", Weight: 1, Checks: checks}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				name := m.Next().Params.Check.Name
				mu.Lock()
				counts[name]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, c := range checks {
		if counts[c.Name] != 40 {
			t.Errorf("check %s sent %d times of 120, want 40: %v", c.Name, counts[c.Name], counts)
		}
	}
}

// TestUsageBoundCountsChecks: a check request's bound counts its messages,
// what it sends beside them (schema, tools, a round trip) and its max
// tokens, so a budget charges a check like any request.
func TestUsageBoundCountsChecks(t *testing.T) {
	plain := answercheck.Check{Name: "a", Prompt: "12345678", MaxTokens: 10, Expect: &answercheck.Expect{Text: "x"}}
	if got := UsageBound(CheckParams(&plain, false)); got != 2+10 {
		t.Errorf("plain check bound %d, want 12 (8 characters = 2 tokens, + 10)", got)
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}
	tool := answercheck.Check{Name: "t", Prompt: "12345678", Tool: &answercheck.ToolCheck{Expect: "w",
		Tools: []answercheck.Tool{{Name: "w", Parameters: schema}}}}
	bare := UsageBound(CheckParams(&tool, false))
	if bare <= 2+answercheck.DefaultMaxTokens {
		t.Errorf("tool check bound %d does not count its tools", bare)
	}
	tool.Tool.RoundTrip = &answercheck.RoundTrip{Result: "18 degrees"}
	if rt := UsageBound(CheckParams(&tool, false)); rt <= bare {
		t.Errorf("round trip bound %d not above the bare tool call's %d", rt, bare)
	}
	js := answercheck.Check{Name: "j", Prompt: "12345678", JSON: &answercheck.JSONCheck{Schema: schema}}
	if got := UsageBound(CheckParams(&js, false)); got <= 2+answercheck.DefaultMaxTokens {
		t.Errorf("json check bound %d does not count its schema", got)
	}
}
