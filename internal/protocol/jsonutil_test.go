package protocol

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestNonJSONEvents: in every adapter that reads JSON events, a payload that
// is not JSON is a server error on an SSE "error" event and a malformed
// stream otherwise, and the payload never reaches the error text.
func TestNonJSONEvents(t *testing.T) {
	const payload = "secret-prompt-echo <html>"
	adapters := []Adapter{OpenAICompletions{}, OpenAIResponses{}, AnthropicMessages{}}
	tests := []struct {
		name     string
		event    string
		serverEr bool
	}{
		{name: "error event", event: "error", serverEr: true},
		{name: "unnamed event", event: ""},
		{name: "message event", event: "message"},
	}
	for _, a := range adapters {
		for _, tt := range tests {
			t.Run(a.Name()+"/"+tt.name, func(t *testing.T) {
				ev, err := a.NewDecoder().Decode(tt.event, []byte(payload))
				if tt.serverEr {
					if err != nil || ev.Err == nil || ev.Err.Type != "error" {
						t.Fatalf("Decode = %+v, %v: want a server error of type error", ev, err)
					}
					return
				}
				if ev.Err != nil || err == nil {
					t.Fatalf("Decode = %+v, %v: want a decode error", ev, err)
				}
				if r, ok := ReasonOf(err); !ok || r != ledger.ReasonMalformed {
					t.Errorf("reason %q (%v), want %q", r, ok, ledger.ReasonMalformed)
				}
				if strings.Contains(err.Error(), "secret") || !strings.HasPrefix(err.Error(), a.Name()+": ") {
					t.Errorf("error text %q: want the API's name and no payload", err)
				}
			})
		}
	}
}

func TestEventType(t *testing.T) {
	tests := []struct{ member, name, want string }{
		{"message_start", "ignored", "message_start"},
		{"", "ping", "ping"},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := eventType(tt.member, tt.name); got != tt.want {
			t.Errorf("eventType(%q, %q) = %q, want %q", tt.member, tt.name, got, tt.want)
		}
	}
}

// TestTypedMembersStayStrict: content read without copying (jsonText) and
// block indexes read without allocating (jsonInt) accept and refuse what the
// string and int fields they replace did: null is nothing, another type is a
// malformed stream. Each case runs on a decoder that just read a full event,
// so state reused between events cannot leak into the next one.
func TestTypedMembersStayStrict(t *testing.T) {
	const (
		anthStart = `{"type":"message_start","message":{"model":"c"}}`
		anthBlock = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"hi"}}`
		respStart = `{"type":"response.created","response":{"model":"m"}}`
		respDelta = `{"type":"response.output_text.delta","delta":"hi"}`
		cmplText  = `{"choices":[{"text":"hi","finish_reason":"stop"},{"text":"x"}]}`
	)
	tests := []struct {
		name   string
		a      Adapter
		before []sseEv
		data   string
		want   Event
		reason ledger.Reason
	}{
		{name: "completions text null", a: OpenAICompletions{}, before: []sseEv{{"", cmplText}}, data: `{"choices":[{"text":null}]}`},
		{name: "completions text empty", a: OpenAICompletions{}, before: []sseEv{{"", cmplText}}, data: `{"choices":[{"text":""}]}`},
		{name: "completions text escaped", a: OpenAICompletions{}, data: `{"choices":[{"text":"\u0000"}]}`, want: Event{Content: true}},
		{name: "completions text number", a: OpenAICompletions{}, data: `{"choices":[{"text":5}]}`, reason: ledger.ReasonMalformed},
		{name: "completions text object", a: OpenAICompletions{}, data: `{"choices":[{"text":{"a":"b"}}]}`, reason: ledger.ReasonMalformed},
		{name: "responses delta null", a: OpenAIResponses{}, before: []sseEv{{"", respStart}, {"", respDelta}}, data: `{"type":"response.output_text.delta","delta":null}`},
		{name: "responses delta absent", a: OpenAIResponses{}, before: []sseEv{{"", respStart}, {"", respDelta}}, data: `{"type":"response.output_text.delta"}`},
		{name: "responses delta bool", a: OpenAIResponses{}, before: []sseEv{{"", respStart}}, data: `{"type":"response.output_text.delta","delta":true}`, reason: ledger.ReasonMalformed},
		{name: "anthropic delta text array", a: AnthropicMessages{}, before: []sseEv{{"", anthStart}, {"", anthBlock}},
			data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":["x"]}}`, reason: ledger.ReasonMalformed},
		{name: "anthropic delta after a full one carries nothing stale", a: AnthropicMessages{}, before: []sseEv{{"", anthStart}, {"", anthBlock},
			{"", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`}},
			data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}`},
		{name: "anthropic index null", a: AnthropicMessages{}, before: []sseEv{{"", anthStart}, {"", anthBlock}},
			data: `{"type":"content_block_stop","index":null}`, reason: ledger.ReasonMalformed},
		{name: "anthropic index absent after a set one", a: AnthropicMessages{}, before: []sseEv{{"", anthStart}, {"", anthBlock}},
			data: `{"type":"content_block_stop"}`, reason: ledger.ReasonMalformed},
		{name: "anthropic index fraction", a: AnthropicMessages{}, before: []sseEv{{"", anthStart}},
			data: `{"type":"content_block_start","index":0.5,"content_block":{"type":"text","text":"x"}}`, reason: ledger.ReasonMalformed},
		{name: "anthropic index string", a: AnthropicMessages{}, before: []sseEv{{"", anthStart}},
			data: `{"type":"content_block_start","index":"0","content_block":{"type":"text","text":"x"}}`, reason: ledger.ReasonMalformed},
		{name: "anthropic type escaped", a: AnthropicMessages{}, before: []sseEv{{"", anthStart}, {"", anthBlock}},
			data: `{"type":"content_block\u005fdelta","index":0,"delta":{"type":"text\u005fdelta","text":"x"}}`, want: Event{Content: true}},
		{name: "anthropic type null and no event name", a: AnthropicMessages{}, before: []sseEv{{"", anthStart}},
			data: `{"type":null}`, reason: ledger.ReasonMalformed},
		{name: "anthropic type number", a: AnthropicMessages{}, before: []sseEv{{"", anthStart}},
			data: `{"type":7}`, reason: ledger.ReasonMalformed},
		{name: "anthropic unknown type is ignored", a: AnthropicMessages{}, before: []sseEv{{"", anthStart}},
			data: `{"type":"future_event","index":0}`},
		{name: "anthropic unknown delta type is neither", a: AnthropicMessages{}, before: []sseEv{{"", anthStart}, {"", anthBlock}},
			data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta2","text":"x"}}`},
		{name: "responses type escaped", a: OpenAIResponses{}, before: []sseEv{{"", respStart}},
			data: `{"type":"response.output_text\u002edelta","delta":"x"}`, want: Event{Content: true}},
		{name: "responses type array", a: OpenAIResponses{}, before: []sseEv{{"", respStart}},
			data: `{"type":["response.output_text.delta"],"delta":"x"}`, reason: ledger.ReasonMalformed},
		{name: "anthropic index negative", a: AnthropicMessages{}, before: []sseEv{{"", anthStart}},
			data: `{"type":"content_block_start","index":-1,"content_block":{"type":"text","text":"x"}}`, want: Event{Content: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.a.NewDecoder()
			for _, e := range tt.before {
				if _, err := d.Decode(e.name, []byte(e.data)); err != nil {
					t.Fatalf("before: %v", err)
				}
			}
			got, err := d.Decode("", []byte(tt.data))
			if tt.reason != "" {
				if r, ok := ReasonOf(err); !ok || r != tt.reason {
					t.Fatalf("err %v, want reason %s", err, tt.reason)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
