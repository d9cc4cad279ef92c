package protocol

import (
	"reflect"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

func TestResponsesDecode(t *testing.T) {
	created := sseEv{"response.created", `{"type":"response.created","response":{"model":"m","status":"in_progress"}}`}
	delta := func(typ, d string) sseEv { return sseEv{typ, `{"type":"` + typ + `","delta":"` + d + `"}`} }
	completed := sseEv{"response.completed", `{"type":"response.completed","response":{"model":"m","status":"completed","usage":{"input_tokens":3,"output_tokens":2}}}`}
	for _, tc := range []struct {
		name   string
		evs    []sseEv
		reason ledger.Reason
		want   []Event
	}{
		{
			name: "type from the data wins; a missing type falls back to the event name",
			evs:  []sseEv{created, {"response.output_text.delta", `{"delta":"x"}`}, {"", `{"type":"response.reasoning_text.delta","delta":"y"}`}},
			want: []Event{{Model: "m"}, {Content: true}, {Reasoning: true}},
		},
		{name: "a delta before response.created", evs: []sseEv{delta("response.output_text.delta", "x")}, reason: ledger.ReasonProtocolError},
		{name: "a second response.created", evs: []sseEv{created, created}, reason: ledger.ReasonProtocolError, want: []Event{{Model: "m"}}},
		{name: "error event with text data", evs: []sseEv{{"error", "bad gateway"}}, want: []Event{{Err: &ServerError{Type: "error", Message: "bad gateway"}}}},
		{name: "a bare error object with no type", evs: []sseEv{created, {"", `{"error":{"code":500,"message":"m","type":"server_error"}}`}}, want: []Event{{Model: "m"}, {Err: &ServerError{Type: "server_error", Code: "500", Message: "m"}}}},
		{name: "not JSON", evs: []sseEv{created, {"", "{oops"}}, reason: ledger.ReasonMalformed, want: []Event{{Model: "m"}}},
		{name: "no type at all", evs: []sseEv{{"", `{"delta":"x"}`}}, reason: ledger.ReasonMalformed},
		{name: "[DONE] before the terminal event", evs: []sseEv{created, {"", "[DONE]"}}, reason: ledger.ReasonProtocolError, want: []Event{{Model: "m"}}},
		{
			name:   "[DONE] after the terminal event is tolerated; data is not",
			evs:    []sseEv{created, completed, {"", "[DONE]"}, delta("response.output_text.delta", "x")},
			reason: ledger.ReasonDataAfterDone,
			want:   []Event{{Model: "m"}, {Done: true, Model: "m", FinishReason: "completed", Usage: &ledger.Usage{Known: true, Prompt: 3, Completion: 2}}, {}},
		},
		{
			name: "unknown and empty events carry nothing",
			evs:  []sseEv{created, {"response.future_thing", `{"type":"response.future_thing","delta":"x"}`}, delta("response.output_text.delta", "")},
			want: []Event{{Model: "m"}, {}, {}},
		},
		{
			name: "error event before anything",
			evs:  []sseEv{{"error", `{"type":"error","code":"rate_limit_exceeded","message":"prompt text"}`}},
			want: []Event{{Err: &ServerError{Type: "error", Code: "rate_limit_exceeded", Message: "prompt text"}}},
		},
		{
			name: "response.failed without an error object",
			evs:  []sseEv{created, {"response.failed", `{"type":"response.failed","response":{"status":"failed"}}`}},
			want: []Event{{Model: "m"}, {Done: true, Err: &ServerError{Type: "response.failed"}}},
		},
		{
			name: "response.incomplete without details",
			evs:  []sseEv{created, {"response.incomplete", `{"type":"response.incomplete","response":{"status":"incomplete"}}`}},
			want: []Event{{Model: "m"}, {Done: true, FinishReason: "incomplete"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := decodeAll(t, APIOpenAIResponses, tc.evs)
			if reason != tc.reason {
				t.Fatalf("reason %q, want %q", reason, tc.reason)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("events\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
