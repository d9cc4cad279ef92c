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
}

// promptTokens estimates prompt tokens as chars/4, rounded up, at least 1.
func (r request) promptTokens() int { return max(1, (r.PromptChars+3)/4) }

// textLen counts the characters of prompt material in any of the shapes the
// APIs accept: a string, an array of strings or parts, a part object with
// "text" and/or "content". A bare number (a token id) counts as 4 chars.
type textLen int

func (t *textLen) UnmarshalJSON(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = textLen(utf8.RuneCountInString(s))
	case '[':
		var parts []textLen
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		n := 0
		for _, p := range parts {
			n += int(p)
		}
		*t = textLen(n)
	case '{':
		var o struct {
			Text    textLen `json:"text"`
			Content textLen `json:"content"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		*t = o.Text + o.Content
	case 'n': // null
		*t = 0
	default: // a number: a token id
		*t = 4
	}
	return nil
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
			Messages      []textLen      `json:"messages"`
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
		for _, m := range v.Messages {
			r.PromptChars += int(m)
		}
	case apiCompletions:
		var v struct {
			Model         string         `json:"model"`
			Stream        bool           `json:"stream"`
			MaxTokens     int            `json:"max_tokens"`
			StreamOptions *streamOptions `json:"stream_options"`
			Prompt        textLen        `json:"prompt"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return r, fmt.Errorf("completions request body: %w", err)
		}
		r = request{Model: v.Model, Stream: v.Stream, MaxTokens: v.MaxTokens, PromptChars: int(v.Prompt)}
		if o := v.StreamOptions; o != nil {
			r.IncludeUsage, r.Continuous = o.IncludeUsage, o.Continuous
		}
	case apiResponses:
		var v struct {
			Model        string  `json:"model"`
			Stream       bool    `json:"stream"`
			MaxOutput    int     `json:"max_output_tokens"`
			Input        textLen `json:"input"`
			Instructions textLen `json:"instructions"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return r, fmt.Errorf("responses request body: %w", err)
		}
		r = request{Model: v.Model, Stream: v.Stream, MaxTokens: v.MaxOutput,
			PromptChars: int(v.Input + v.Instructions), IncludeUsage: true}
	case apiMessages:
		var v struct {
			Model     string    `json:"model"`
			Stream    bool      `json:"stream"`
			MaxTokens int       `json:"max_tokens"`
			System    textLen   `json:"system"`
			Messages  []textLen `json:"messages"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return r, fmt.Errorf("messages request body: %w", err)
		}
		r = request{Model: v.Model, Stream: v.Stream, MaxTokens: v.MaxTokens,
			PromptChars: int(v.System), IncludeUsage: true}
		for _, m := range v.Messages {
			r.PromptChars += int(m)
		}
	}
	if r.MaxTokens < 0 {
		return r, fmt.Errorf("max tokens %d must be >= 0", r.MaxTokens)
	}
	return r, nil
}
