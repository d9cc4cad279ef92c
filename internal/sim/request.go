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
	// Ask is what the prompt library reads (answer.go).
	Ask ask
}

// ask is what a request carries for the prompt library: the last user
// message and the raw fields that ask for a shape, parsed only when needed.
type ask struct {
	last       []byte // the last user message's text (completions: the prompt)
	toolResult bool   // the last turn is a tool result
	result     []byte // its text
	tools      json.RawMessage
	toolChoice json.RawMessage
	format     json.RawMessage // response_format (chat, completions); text (Responses)
	schema     json.RawMessage // llama.cpp's native json_schema body field
	stop       json.RawMessage // stop (OpenAI), stop_sequences (Anthropic)
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
	// tool is set when a part is an Anthropic tool_result block; result is
	// its text.
	tool   bool
	result []byte
}

func (t *promptText) add(o promptText) {
	t.chars += o.chars
	t.text = append(t.text, o.text...)
	if o.tool {
		t.tool, t.result = true, o.result
	}
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
			Type    partType   `json:"type"`
			Text    promptText `json:"text"`
			Content promptText `json:"content"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		t.add(o.Text)
		t.add(o.Content)
		if o.Type == typeToolResult {
			t.tool, t.result = true, o.Content.text
		}
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

// turn is one message or input item: its role, its text as the prompt
// (promptText's rules) and whether it is a tool result (chat role tool, an
// Anthropic tool_result block, a Responses function_call_output item).
type turn struct {
	role   role
	p      promptText
	tool   bool
	result []byte
}

func (m *turn) UnmarshalJSON(b []byte) error {
	*m = turn{}
	if len(b) == 0 || b[0] != '{' {
		return m.p.UnmarshalJSON(b)
	}
	var o struct {
		Role    role       `json:"role"`
		Type    partType   `json:"type"`
		Text    promptText `json:"text"`
		Content promptText `json:"content"`
		Output  promptText `json:"output"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	m.role = o.Role
	if o.Role == roleUser && o.Type != typeNone && o.Type != typeMessage {
		m.role = roleOther // a Responses item other than a message (function_call, …)
	}
	m.p.add(o.Text)
	m.p.add(o.Content)
	switch {
	case m.role == roleTool:
		m.tool, m.result = true, o.Content.text
	case o.Type == typeFunctionCallOutput:
		m.tool, m.result = true, o.Output.text
	case o.Content.tool:
		m.tool, m.result = true, o.Content.result
	}
	return nil
}

// role is a turn's role as the library reads it.
type role uint8

const (
	roleUser  role = iota // "user", or none (a bare string or part)
	roleTool              // "tool" (OpenAI chat's tool result)
	roleOther             // system, assistant, developer, …
)

// UnmarshalJSON reads any JSON value without allocating (any value is
// accepted, as before the library read roles).
func (r *role) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"user"`, "null":
		*r = roleUser
	case `"tool"`:
		*r = roleTool
	default:
		*r = roleOther
	}
	return nil
}

// partType is the type of a content part or Responses input item, as far
// as the library reads it.
type partType uint8

const (
	typeNone partType = iota // absent
	typeMessage
	typeToolResult         // Anthropic tool_result block
	typeFunctionCallOutput // Responses function_call_output item
	typeOther
)

// UnmarshalJSON reads any JSON value without allocating.
func (t *partType) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"message"`:
		*t = typeMessage
	case `"tool_result"`:
		*t = typeToolResult
	case `"function_call_output"`:
		*t = typeFunctionCallOutput
	case "null":
		*t = typeNone
	default:
		*t = typeOther
	}
	return nil
}

// turns is a list of turns; a bare string or part is one user turn
// (Responses' input may be either).
type turns []turn

func (ts *turns) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, (*[]turn)(ts))
	}
	var m turn
	if err := m.UnmarshalJSON(b); err != nil {
		return err
	}
	*ts = turns{m}
	return nil
}

// joinTurns is joinPrompt over the leading parts and then the turns; it
// also finds the last user message and whether the last turn is a tool
// result.
func joinTurns(r *request, lead []promptText, ts []turn) {
	var all promptText
	for _, p := range lead {
		all.add(p)
	}
	for i := range ts {
		all.add(ts[i].p)
	}
	r.PromptChars, r.Prompt = all.chars, all.text
	if n := len(ts); n > 0 && ts[n-1].tool {
		r.Ask.toolResult, r.Ask.result = true, ts[n-1].result
	}
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].role == roleUser {
			r.Ask.last = ts[i].p.text
			return
		}
	}
}

// openAIAsk are the OpenAI chat and completions fields the prompt library
// reads (and llama.cpp's native json_schema).
type openAIAsk struct {
	Format json.RawMessage `json:"response_format"`
	Schema json.RawMessage `json:"json_schema"`
	Stop   json.RawMessage `json:"stop"`
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
			Messages      []turn         `json:"messages"`
			openAIAsk
			Tools      json.RawMessage `json:"tools"`
			ToolChoice json.RawMessage `json:"tool_choice"`
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
		joinTurns(&r, nil, v.Messages)
		r.Ask.format, r.Ask.schema, r.Ask.stop = v.Format, v.Schema, v.Stop
		r.Ask.tools, r.Ask.toolChoice = v.Tools, v.ToolChoice
	case apiCompletions:
		var v struct {
			Model         string         `json:"model"`
			Stream        bool           `json:"stream"`
			MaxTokens     int            `json:"max_tokens"`
			StreamOptions *streamOptions `json:"stream_options"`
			Prompt        promptText     `json:"prompt"`
			openAIAsk
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return r, fmt.Errorf("completions request body: %w", err)
		}
		r = request{Model: v.Model, Stream: v.Stream, MaxTokens: v.MaxTokens}
		joinPrompt(&r, v.Prompt)
		r.Ask.last = r.Prompt
		r.Ask.format, r.Ask.schema, r.Ask.stop = v.Format, v.Schema, v.Stop
		if o := v.StreamOptions; o != nil {
			r.IncludeUsage, r.Continuous = o.IncludeUsage, o.Continuous
		}
	case apiResponses:
		var v struct {
			Model        string          `json:"model"`
			Stream       bool            `json:"stream"`
			MaxOutput    int             `json:"max_output_tokens"`
			Input        turns           `json:"input"`
			Instructions promptText      `json:"instructions"`
			Text         json.RawMessage `json:"text"`
			Tools        json.RawMessage `json:"tools"`
			ToolChoice   json.RawMessage `json:"tool_choice"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return r, fmt.Errorf("responses request body: %w", err)
		}
		r = request{Model: v.Model, Stream: v.Stream, MaxTokens: v.MaxOutput, IncludeUsage: true}
		joinTurns(&r, []promptText{v.Instructions}, v.Input)
		r.Ask.format, r.Ask.tools, r.Ask.toolChoice = v.Text, v.Tools, v.ToolChoice
	case apiMessages:
		var v struct {
			Model         string          `json:"model"`
			Stream        bool            `json:"stream"`
			MaxTokens     int             `json:"max_tokens"`
			System        promptText      `json:"system"`
			Messages      []turn          `json:"messages"`
			StopSequences json.RawMessage `json:"stop_sequences"`
			Tools         json.RawMessage `json:"tools"`
			ToolChoice    json.RawMessage `json:"tool_choice"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return r, fmt.Errorf("messages request body: %w", err)
		}
		r = request{Model: v.Model, Stream: v.Stream, MaxTokens: v.MaxTokens, IncludeUsage: true}
		joinTurns(&r, []promptText{v.System}, v.Messages)
		r.Ask.stop, r.Ask.tools, r.Ask.toolChoice = v.StopSequences, v.Tools, v.ToolChoice
	}
	if r.MaxTokens < 0 {
		return r, fmt.Errorf("max tokens %d must be >= 0", r.MaxTokens)
	}
	return r, nil
}
