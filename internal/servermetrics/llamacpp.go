package servermetrics

import "fmt"

// Tokens is a window's token throughput by the server's own counters
// (llama.cpp's prompt_tokens_total, tokens_predicted_total and the seconds
// it spent on each).
type Tokens struct {
	// Prompt and Generated are the increases over the window; their rates
	// are per second of the window (wall time).
	Prompt, PromptRate       float64
	Generated, GeneratedRate float64
	// PerSequence is generated tokens per second of generation time
	// summed over slots: one sequence's speed (0 when unknown).
	PerSequence float64
	// PromptOK and GeneratedOK say which figures the server exposed.
	PromptOK, GeneratedOK bool
}

// TokenThroughput reads a view's token counters. llama.cpp adds a
// request's tokens to its counters when the request finishes, so a window
// counts the tokens of the requests that finished in it.
func TokenThroughput(v View) Tokens {
	var t Tokens
	if s := v.Get(PromptTokens); s != nil && s.Counter != nil {
		t.Prompt, t.PromptRate, t.PromptOK = s.Counter.Increase, s.Counter.Rate, true
	}
	if s := v.Get(GenTokens); s != nil && s.Counter != nil {
		t.Generated, t.GeneratedRate, t.GeneratedOK = s.Counter.Increase, s.Counter.Rate, true
		if g := v.Get(GenSeconds); g != nil && g.Counter != nil && g.Counter.Increase > 0 && s.Counter.Resets == 0 && g.Counter.Resets == 0 {
			t.PerSequence = s.Counter.Increase / g.Counter.Increase
		}
	}
	return t
}

// tokenPhrases are Explain's token figures: prompt and generated tokens,
// their rates and one sequence's speed.
func tokenPhrases(v View) []string {
	t := TokenThroughput(v)
	var out []string
	if t.PromptOK {
		out = append(out, fmt.Sprintf("%s prompt tokens (%s/s)", num(t.Prompt), num(t.PromptRate)))
	}
	if t.GeneratedOK {
		p := fmt.Sprintf("%s tokens generated (%s/s", num(t.Generated), num(t.GeneratedRate))
		if t.PerSequence > 0 {
			p += fmt.Sprintf("; %s/s per sequence", num(t.PerSequence))
		}
		out = append(out, p+")")
	}
	return out
}
