package protocol

import (
	"encoding/json"

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
