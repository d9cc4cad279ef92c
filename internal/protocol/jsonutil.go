package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// unmarshalEvent decodes one SSE event's JSON payload into v for the
// adapters that read JSON events (completions, Responses, Anthropic). what
// names the payload in the error ("chunk", "event"). When stop is true the
// caller returns (ev, err) as they are: the payload was not JSON, which is
// still a server error on an SSE "error" event and a malformed stream
// otherwise. The payload itself never reaches the error text.
func unmarshalEvent(api, name, what string, data []byte, v any) (ev Event, stop bool, err error) {
	uerr := json.Unmarshal(data, v)
	if uerr == nil {
		return Event{}, false, nil
	}
	if name == "error" {
		return Event{Err: errorObject(data)}, true, nil
	}
	return Event{}, true, jsonDecodeErr(api, what, uerr)
}

// jsonDecodeErr is the malformed-stream error for a payload encoding/json
// refused, saying what was unexpected: valid JSON of another shape names
// the member and the types wanted and found ("chunk: usage.prompt_tokens:
// want an integer, got a number with a fraction"); anything else is "not
// valid JSON". Member paths are the decoder's own field names; no value
// the server sent is quoted.
func jsonDecodeErr(api, what string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "a member"
		}
		return decodeErr(api, ledger.ReasonMalformed, "%s: %s: want %s, got %s", what, field, wantKind(te.Type), gotKind(te.Value))
	}
	return decodeErr(api, ledger.ReasonMalformed, "%s is not valid JSON", what)
}

// wantKind names the JSON a Go type takes.
func wantKind(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another type"
}

// gotKind names the JSON value encoding/json describes as v ("number 1.5",
// "object", …) without repeating it.
func gotKind(v string) string {
	kind, num, _ := strings.Cut(v, " ")
	switch kind {
	case "number":
		if strings.ContainsAny(num, ".eE") {
			return "a number with a fraction or exponent"
		}
		return "an integer out of range"
	case "string":
		return "a string"
	case "object":
		return "an object"
	case "array":
		return "a list"
	case "bool":
		return "true or false"
	}
	return "another type"
}

// typeErr is what the decoders' own member types return for a value of
// the wrong type, as encoding/json does for the fields they replace;
// encoding/json adds the member's path.
func typeErr(b []byte, want reflect.Type) error {
	v := "another type"
	switch {
	case len(b) == 0:
	case b[0] == '"':
		v = "string"
	case b[0] == '{':
		v = "object"
	case b[0] == '[':
		v = "array"
	case b[0] == 't' || b[0] == 'f':
		v = "bool"
	default:
		v = "number " + string(b)
	}
	return &json.UnmarshalTypeError{Value: v, Type: want}
}

// eventType is a typed event's type: its JSON type member, else the SSE
// event name.
func eventType(member, name string) string {
	if member != "" {
		return member
	}
	return name
}

// doneMarker is the data of the OpenAI streams' last event.
var doneMarker = []byte("[DONE]")

// openAIStreamOptions is the stream_options object of the OpenAI chat and
// completions requests.
type openAIStreamOptions struct {
	IncludeUsage         bool `json:"include_usage"`
	ContinuousUsageStats bool `json:"continuous_usage_stats,omitempty"` // vLLM per-chunk usage
}

// openAIUsage is the usage object of the OpenAI chat and completions APIs.
type openAIUsage struct {
	PromptTokens            int `json:"prompt_tokens"`
	CompletionTokens        int `json:"completion_tokens"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptTokensDetails *openAITokenDetails `json:"prompt_tokens_details"`
}

// openAITokenDetails is usage.prompt_tokens_details (chat, completions) or
// usage.input_tokens_details (Responses): the prompt tokens served from the
// server's prompt cache, when it says.
type openAITokenDetails struct {
	CachedTokens jsonInt `json:"cached_tokens"`
}

// cache is the cache report of a details object (nil: nothing said).
func (d *openAITokenDetails) cache() ledger.CacheReport {
	if d == nil {
		return ledger.CacheReport{}
	}
	return ledger.CacheReport{Read: int64(d.CachedTokens.v), HasRead: d.CachedTokens.set}
}

func (u *openAIUsage) ledger() *ledger.Usage {
	if u == nil {
		return nil
	}
	reasoning := 0
	if u.CompletionTokensDetails != nil {
		reasoning = u.CompletionTokensDetails.ReasoningTokens
	}
	return usageOf(u.PromptTokens, u.CompletionTokens, reasoning, u.PromptTokensDetails.cache())
}

// usageOf is the one place a server's token counts are validated, as they
// are decoded (ledger.CheckUsage): a negative or absurd count makes the
// usage unknown and flagged, never a figure. Its cache counts are checked
// against the prompt (ledger.Usage.WithCache): an impossible one is dropped
// and flagged.
func usageOf(prompt, completion, reasoning int, cache ledger.CacheReport) *ledger.Usage {
	u := ledger.CheckUsage(int64(prompt), int64(completion), int64(reasoning)).WithCache(cache)
	return &u
}

// jsonText decodes to whether a JSON string is non-empty, without unquoting
// or copying it (content is only ever tested for being non-empty). Like a
// string field it takes null as nothing and fails on any other type.
// (jsonNonEmpty, the chat decoder's, ignores other types instead.)
type jsonText bool

func (t *jsonText) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '"':
		*t = len(b) > 2
	case string(b) != "null":
		return typeErr(b, reflect.TypeFor[string]())
	}
	return nil
}

// jsonInt is an optional integer member: set is false when it is absent or
// null. Like an int field it fails on anything but an integer that fits,
// and unlike *int it allocates nothing.
type jsonInt struct {
	v   int
	set bool
}

func (n *jsonInt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	v, err := strconv.ParseInt(string(b), 10, strconv.IntSize)
	if err != nil {
		return typeErr(b, reflect.TypeFor[int]())
	}
	n.v, n.set = int(v), true
	return nil
}

// jsonName is a string member that is nearly always one of a few names the
// decoders know (event, block and delta types): a known name is not
// copied. Anything else decodes as a string field would, failures included.
type jsonName string

// knownNames are the type names of the Responses and Anthropic streams,
// read-only after package initialisation.
var knownNames = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{
		"response.created", "response.in_progress", "response.output_item.added", "response.output_item.done",
		"response.content_part.added", "response.content_part.done", "response.output_text.delta",
		"response.output_text.done", "response.reasoning_text.delta", "response.reasoning_summary_text.delta",
		"response.completed", "response.incomplete", "response.failed", "error",
		"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
		"message_stop", "ping", "text", "thinking", "tool_use", "text_delta", "thinking_delta",
		"signature_delta", "input_json_delta",
	} {
		m[n] = n
	}
	return m
}()

// knownName is an event type for an error message: the type when it is one
// the decoders know, else words of the decoder's own (a server's type name
// never reaches error text).
func knownName(typ string) string {
	if k, ok := knownNames[typ]; ok {
		return k
	}
	return "an event of another type"
}

func (n *jsonName) UnmarshalJSON(b []byte) error {
	if len(b) > 1 && b[0] == '"' && bytes.IndexByte(b, '\\') < 0 {
		if k, ok := knownNames[string(b[1:len(b)-1])]; ok {
			*n = jsonName(k)
			return nil
		}
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = jsonName(v)
	return nil
}
