package protocol

import (
	"reflect"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

func TestCompletionsDecode(t *testing.T) {
	chunk := func(text, usage string) sseEv {
		u := "null"
		if usage != "" {
			u = usage
		}
		return sseEv{"", `{"object":"text_completion","model":"m","choices":[{"text":"` + text + `","index":0,"finish_reason":null}],"usage":` + u + `}`}
	}
	for _, tc := range []struct {
		name   string
		evs    []sseEv
		reason ledger.Reason
		want   []Event
	}{
		{
			name: "error object with numeric code",
			evs:  []sseEv{{"", `{"error":{"message":"secret prompt","type":"invalid_request_error","code":400}}`}},
			want: []Event{{Err: &ServerError{Type: "invalid_request_error", Code: "400", Message: "secret prompt"}}},
		},
		{
			name: "error as a bare string is its message",
			evs:  []sseEv{{"", `{"error":"the prompt was: hello"}`}},
			want: []Event{{Err: &ServerError{Type: "error", Message: "the prompt was: hello"}}},
		},
		{
			name: "named error event",
			evs:  []sseEv{{"error", `{"message":"boom"}`}},
			want: []Event{{Err: &ServerError{Type: "error", Message: "boom"}}},
		},
		{
			name: "named error event with text data",
			evs:  []sseEv{{"error", `Internal Server Error`}},
			want: []Event{{Err: &ServerError{Type: "error", Message: "Internal Server Error"}}},
		},
		{name: "not an object", evs: []sseEv{{"", `[1,2]`}}, reason: ledger.ReasonMalformed},
		{name: "wrong shape", evs: []sseEv{{"", `{"choices":"x"}`}}, reason: ledger.ReasonMalformed},
		{name: "after done", evs: []sseEv{{"", "[DONE]"}, {"", "[DONE]"}}, reason: ledger.ReasonDataAfterDone, want: []Event{{Done: true}}},
		{name: "blank data is ignored", evs: []sseEv{{"", "  "}}, want: []Event{{}}},
		{
			name: "usage deltas stop at the first content chunk without usage",
			evs:  []sseEv{chunk("a", `{"prompt_tokens":3,"completion_tokens":2}`), chunk("b", ""), chunk("c", `{"prompt_tokens":3,"completion_tokens":5}`)},
			want: []Event{
				{Content: true, Tokens: 2, Model: "m", Usage: &ledger.Usage{Known: true, Prompt: 3, Completion: 2}},
				{Content: true, Model: "m"},
				{Content: true, Model: "m", Usage: &ledger.Usage{Known: true, Prompt: 3, Completion: 5}},
			},
		},
		{
			name: "a count that goes backwards is not a delta",
			evs:  []sseEv{chunk("a", `{"completion_tokens":4}`), chunk("b", `{"completion_tokens":3}`), chunk("c", `{"completion_tokens":6}`)},
			want: []Event{
				{Content: true, Tokens: 4, Model: "m", Usage: &ledger.Usage{Known: true, Completion: 4}},
				{Content: true, Model: "m", Usage: &ledger.Usage{Known: true, Completion: 3}},
				{Content: true, Model: "m", Usage: &ledger.Usage{Known: true, Completion: 6}},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := decodeAll(t, APIOpenAICompletions, tc.evs)
			if reason != tc.reason {
				t.Fatalf("reason %q, want %q", reason, tc.reason)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("events\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
