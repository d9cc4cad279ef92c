package answercheck

// This file is the configuration's shape of a check (classes[].checks[]):
// the contract the configuration, the protocol client and the simulator
// share. Validate, Kind and Judge are implemented in judge.go.

// Check is one answer canary as configured: a prompt (or a multi-turn
// exchange) sent deterministically, and what a right answer is. Exactly one
// of Expect, JSON, Tool, Stop, Length, Model is set.
type Check struct {
	Name string `koanf:"name" json:"name"`
	// Prompt is the user message; Messages a multi-turn exchange instead
	// (the last message is the user's).
	Prompt   string    `koanf:"prompt" json:"prompt,omitempty"`
	Messages []Message `koanf:"messages" json:"messages,omitempty"`
	// MaxTokens bounds the answer (max_tokens); 0 is DefaultMaxTokens.
	MaxTokens int `koanf:"max_tokens" json:"max_tokens,omitempty"`
	// Seed is sent where the API takes one (temperature is always 0).
	Seed int64 `koanf:"seed" json:"seed,omitempty"`

	Expect *Expect    `koanf:"expect" json:"expect,omitempty"`
	JSON   *JSONCheck `koanf:"json" json:"json,omitempty"`
	Tool   *ToolCheck `koanf:"tool_call" json:"tool_call,omitempty"`
	Stop   *StopCheck `koanf:"stop" json:"stop,omitempty"`
	Length *Length    `koanf:"length" json:"length,omitempty"`
	Model  *Model     `koanf:"model" json:"model,omitempty"`

	// compiled holds what Validate compiled (regular expressions, JSON
	// Schemas), so that Judge compiles nothing; nil before Validate.
	compiled *compiled
}

// DefaultMaxTokens is a check's max_tokens when unset.
const DefaultMaxTokens = 64

// Message is one turn of a multi-turn check.
type Message struct {
	Role    string `koanf:"role" json:"role"` // system | user | assistant
	Content string `koanf:"content" json:"content"`
}

// Expect is a right text. Exactly one of Text, Regex, Number, OneOf.
type Expect struct {
	Text      string   `koanf:"text" json:"text,omitempty"`
	Regex     string   `koanf:"regex" json:"regex,omitempty"`
	Number    *float64 `koanf:"number" json:"number,omitempty"`
	Tolerance float64  `koanf:"tolerance" json:"tolerance,omitempty"` // with Number: |answer - number| <= tolerance
	OneOf     []string `koanf:"one_of" json:"one_of,omitempty"`
	// Case is "sensitive" (default) or "insensitive".
	Case string `koanf:"case" json:"case,omitempty"`
	// Whitespace is "trim" (default: leading and trailing removed),
	// "collapse" (trimmed, inner runs as one space) or "exact".
	Whitespace string `koanf:"whitespace" json:"whitespace,omitempty"`
}

// JSONCheck asks for JSON that validates against a JSON Schema.
type JSONCheck struct {
	Schema     map[string]any `koanf:"schema" json:"schema,omitempty"`
	SchemaFile string         `koanf:"schema_file" json:"schema_file,omitempty"`
	// Send is how the schema is asked for: "response_format" (default; the
	// API's structured output: OpenAI chat response_format json_schema,
	// Responses text.format, none on Anthropic: falls back to prompt),
	// "json_object" (response_format json_object, the schema in the
	// prompt), "native" (llama.cpp's json_schema body field) or "prompt"
	// (the schema in the prompt only).
	Send string `koanf:"send" json:"send,omitempty"`
}

// ToolCheck offers tools and expects one to be called.
type ToolCheck struct {
	Tools []Tool `koanf:"tools" json:"tools"`
	// Expect is the name of the tool that must be called.
	Expect string `koanf:"expect" json:"expect"`
	// Choice is "required" (default), "auto" or "named" (this tool).
	Choice string `koanf:"choice" json:"choice,omitempty"`
	// RoundTrip, when set, sends the tool's result back and checks the
	// final answer.
	RoundTrip *RoundTrip `koanf:"round_trip" json:"round_trip,omitempty"`
}

// Tool is one offered tool: its name, description and a JSON Schema for its
// arguments.
type Tool struct {
	Name        string         `koanf:"name" json:"name"`
	Description string         `koanf:"description" json:"description,omitempty"`
	Parameters  map[string]any `koanf:"parameters" json:"parameters"`
}

// RoundTrip is the tool's result to send back and the right final answer.
type RoundTrip struct {
	// Arguments are the arguments of the tool call the exchange replays
	// (the assistant's turn before the result); empty is {}.
	Arguments map[string]any `koanf:"arguments" json:"arguments,omitempty"`
	Result    string         `koanf:"result" json:"result"`
	Expect    Expect         `koanf:"expect" json:"expect"`
}

// StopCheck sends stop sequences; the text must contain none of them.
type StopCheck struct {
	Sequences []string `koanf:"sequences" json:"sequences"`
}

// Length expects the answer cut exactly at the check's max_tokens, with
// finish reason length, by the server's usage.
type Length struct{}

// Model expects the answering model (and, where sent, the system
// fingerprint).
type Model struct {
	Name              string `koanf:"name" json:"name"`
	SystemFingerprint string `koanf:"system_fingerprint" json:"system_fingerprint,omitempty"`
}
