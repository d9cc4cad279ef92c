package sim

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// api names one of the served APIs.
type api int

const (
	apiChat        api = iota // OpenAI POST /v1/chat/completions
	apiCompletions            // OpenAI POST /v1/completions
	apiResponses              // OpenAI POST /v1/responses
	apiMessages               // Anthropic POST /v1/messages
)

// request is what the simulator needs from any API's request body.
type request struct {
	Model        string
	Stream       bool
	MaxTokens    int // 0 = no cap
	IncludeUsage bool
	Continuous   bool // stream_options.continuous_usage_stats (vLLM)
	PromptChars  int
	// Prompt is the prompt text in the order the model would read it
	// (system or instructions first, then the messages or input), without
	// roles: what the prefix cache hashes. Its length in runes is
	// PromptChars.
	Prompt []byte
}

// promptTokens estimates prompt tokens as chars/4, rounded up, at least 1.
func (r request) promptTokens() int { return max(1, (r.PromptChars+3)/4) }

// promptText collects the prompt material in any of the shapes the APIs
// accept: a string, an array of strings or parts, a part object with "text"
// and/or "content". A bare number (a token id) counts as 4 chars and its
// digits as its text.
type promptText struct {
	chars int
	text  []byte
}

func (t *promptText) add(o promptText) {
	t.chars += o.chars
	t.text = append(t.text, o.text...)
}

func (t *promptText) UnmarshalJSON(b []byte) error {
	*t = promptText{}
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		t.chars, t.text = utf8.RuneCountInString(s), []byte(s)
	case '[':
		var parts []promptText
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		for _, p := range parts {
			t.add(p)
		}
	case '{':
		var o struct {
			Text    promptText `json:"text"`
			Content promptText `json:"content"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		t.add(o.Text)
		t.add(o.Content)
	case 'n': // null
	default: // a number: a token id
		t.chars, t.text = 4, append([]byte(nil), b...)
	}
	return nil
}

// joinPrompt is the request's prompt from its parts, in order.
func joinPrompt(r *request, parts ...promptText) {
	var all promptText
	for _, p := range parts {
		all.add(p)
	}
	r.PromptChars, r.Prompt = all.chars, all.text
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
	Continuous   bool `json:"continuous_usage_stats"`
}

// decodeRequest reads the fields of one API's request body.
func decodeRequest(a api, body []byte) (request, error) {
	var r request
	switch a {
	case apiChat:
		var v struct {
			Model         string         `json:"model"`
			Stream        bool           `json:"stream"`
			MaxTokens     int            `json:"max_tokens"`
			MaxCompletion int            `json:"max_completion_tokens"`
			StreamOptions *streamOptions `json:"stream_options"`
			Messages      []promptText   `json:"messages"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return r, fmt.Errorf("chat completions request body: %w", err)
		}
		r = request{Model: v.Model, Stream: v.Stream, MaxTokens: v.MaxTokens}
		if v.MaxCompletion > 0 {
			r.MaxTokens = v.MaxCompletion
		}
		if o := v.StreamOptions; o != nil {
			r.IncludeUsage, r.Continuous = o.IncludeUsage, o.Continuous
		}
		joinPrompt(&r, v.Messages...)
	case apiCompletions:
		var v struct {
			Model         string         `json:"model"`
			Stream        bool           `json:"stream"`
			MaxTokens     int            `json:"max_tokens"`
			StreamOptions *streamOptions `json:"stream_options"`
			Prompt        promptText     `json:"prompt"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return r, fmt.Errorf("completions request body: %w", err)
		}
		r = request{Model: v.Model, Stream: v.Stream, MaxTokens: v.MaxTokens}
		joinPrompt(&r, v.Prompt)
		if o := v.StreamOptions; o != nil {
			r.IncludeUsage, r.Continuous = o.IncludeUsage, o.Continuous
		}
	case apiResponses:
		var v struct {
			Model        string     `json:"model"`
			Stream       bool       `json:"stream"`
			MaxOutput    int        `json:"max_output_tokens"`
			Input        promptText `json:"input"`
			Instructions promptText `json:"instructions"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return r, fmt.Errorf("responses request body: %w", err)
		}
		r = request{Model: v.Model, Stream: v.Stream, MaxTokens: v.MaxOutput, IncludeUsage: true}
		joinPrompt(&r, v.Instructions, v.Input)
	case apiMessages:
		var v struct {
			Model     string       `json:"model"`
			Stream    bool         `json:"stream"`
			MaxTokens int          `json:"max_tokens"`
			System    promptText   `json:"system"`
			Messages  []promptText `json:"messages"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return r, fmt.Errorf("messages request body: %w", err)
		}
		r = request{Model: v.Model, Stream: v.Stream, MaxTokens: v.MaxTokens, IncludeUsage: true}
		joinPrompt(&r, append([]promptText{v.System}, v.Messages...)...)
	}
	if r.MaxTokens < 0 {
		return r, fmt.Errorf("max tokens %d must be >= 0", r.MaxTokens)
	}
	return r, nil
}
