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
