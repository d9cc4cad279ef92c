package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// unmarshalEvent decodes one SSE event's JSON payload into v for the
// adapters that read JSON events (completions, Responses, Anthropic). what
// names the payload in the error ("chunk", "event"). When stop is true the
// caller returns (ev, err) as they are: the payload was not JSON, which is
// still a server error on an SSE "error" event and a malformed stream
// otherwise. The payload itself never reaches the error text.
func unmarshalEvent(api, name, what string, data []byte, v any) (ev Event, stop bool, err error) {
	if json.Unmarshal(data, v) == nil {
		return Event{}, false, nil
	}
	if name == "error" {
		return Event{Err: &ServerError{Type: "error"}}, true, nil
	}
	return Event{}, true, decodeErr(api, ledger.ReasonMalformed, "%s is not valid JSON", what)
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
}

func (u *openAIUsage) ledger() *ledger.Usage {
	if u == nil {
		return nil
	}
	lu := &ledger.Usage{Known: true, Prompt: u.PromptTokens, Completion: u.CompletionTokens}
	if u.CompletionTokensDetails != nil {
		lu.Reasoning = u.CompletionTokensDetails.ReasoningTokens
	}
	return lu
}

// errJSONType is what jsonText and jsonInt return for a value of another
// type, as encoding/json fails a string or int field given one.
var errJSONType = errors.New("json: value of the wrong type")

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
		return errJSONType
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
		return errJSONType
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
