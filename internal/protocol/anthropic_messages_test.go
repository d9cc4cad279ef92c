package protocol

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

func TestAnthropicDecode(t *testing.T) {
	start := sseEv{"message_start", `{"type":"message_start","message":{"model":"c","usage":{"input_tokens":10,"output_tokens":1}}}`}
	block := func(i int, typ string) sseEv {
		return sseEv{"content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":%q}}`, i, typ)}
	}
	delta := func(i int, typ, field, v string) sseEv {
		return sseEv{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":%q,%q:%q}}`, i, typ, field, v)}
	}
	stop := func(i int) sseEv {
		return sseEv{"content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)}
	}
	msgStop := sseEv{"message_stop", `{"type":"message_stop"}`}
	for _, tc := range []struct {
		name   string
		evs    []sseEv
		reason ledger.Reason
		want   []Event
	}{
		{
			name: "blocks: thinking, signature, text, tool input",
			evs: []sseEv{start, block(0, "thinking"), delta(0, "thinking_delta", "thinking", "hm"), delta(0, "signature_delta", "signature", "zz"), stop(0),
				block(1, "text"), delta(1, "text_delta", "text", "hi"), delta(1, "text_delta", "text", ""), stop(1),
				block(2, "tool_use"), delta(2, "input_json_delta", "partial_json", "{}"), stop(2), msgStop},
			want: []Event{{Model: "c"}, {}, {Reasoning: true}, {}, {}, {}, {Content: true}, {}, {}, {}, {}, {}, {Done: true}},
		},
		{name: "delta before message_start", evs: []sseEv{delta(0, "text_delta", "text", "x")}, reason: ledger.ReasonProtocolError},
		{name: "ping before message_start is fine", evs: []sseEv{{"ping", `{"type":"ping"}`}, start}, want: []Event{{}, {Model: "c"}}},
		{name: "second message_start", evs: []sseEv{start, start}, reason: ledger.ReasonProtocolError, want: []Event{{Model: "c"}}},
		{name: "delta for a block never started", evs: []sseEv{start, delta(3, "text_delta", "text", "x")}, reason: ledger.ReasonProtocolError, want: []Event{{Model: "c"}}},
		{name: "block started twice", evs: []sseEv{start, block(0, "text"), block(0, "text")}, reason: ledger.ReasonProtocolError, want: []Event{{Model: "c"}, {}}},
		{name: "stop of a closed block", evs: []sseEv{start, block(0, "text"), stop(0), stop(0)}, reason: ledger.ReasonProtocolError, want: []Event{{Model: "c"}, {}, {}}},
		{name: "message_stop with a block open", evs: []sseEv{start, block(0, "text"), msgStop}, reason: ledger.ReasonProtocolError, want: []Event{{Model: "c"}, {}}},
		{name: "event after message_stop", evs: []sseEv{start, msgStop, {"ping", `{"type":"ping"}`}}, reason: ledger.ReasonDataAfterDone, want: []Event{{Model: "c"}, {Done: true}}},
		{name: "error event with text data", evs: []sseEv{{"error", "upstream overloaded"}}, want: []Event{{Err: &ServerError{Type: "error", Message: "upstream overloaded"}}}},
		{name: "a bare error object is an in-band error", evs: []sseEv{start, {"", `{"error":{"type":"overloaded_error","message":"Overloaded"}}`}}, want: []Event{{Model: "c"}, {Err: &ServerError{Type: "overloaded_error", Message: "Overloaded"}}}},
		{name: "a null error member is no error", evs: []sseEv{start, {"", `{"error":null}`}}, reason: ledger.ReasonMalformed, want: []Event{{Model: "c"}}},
		{name: "not JSON", evs: []sseEv{start, {"content_block_delta", "{oops"}}, reason: ledger.ReasonMalformed, want: []Event{{Model: "c"}}},
		{name: "message_start without message", evs: []sseEv{{"message_start", `{"type":"message_start"}`}}, reason: ledger.ReasonMalformed},
		{name: "delta without index", evs: []sseEv{start, {"content_block_delta", `{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}`}}, reason: ledger.ReasonMalformed, want: []Event{{Model: "c"}}},
		{
			name: "unknown events are ignored; message_delta may restate input tokens",
			evs: []sseEv{start, {"future_event", `{"type":"future_event"}`},
				{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":12,"cache_read_input_tokens":30,"output_tokens":7}}`}, msgStop},
			want: []Event{{Model: "c"}, {}, {FinishReason: "end_turn", Usage: &ledger.Usage{Known: true, Prompt: 42, Completion: 7, CachedPrompt: ledger.KnownCount(30)}}, {Done: true}},
		},
		{
			name: "error event keeps the inner type and message",
			evs:  []sseEv{start, {"error", `{"type":"error","error":{"type":"overloaded_error","message":"prompt was x"}}`}},
			want: []Event{{Model: "c"}, {Err: &ServerError{Type: "overloaded_error", Message: "prompt was x"}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := decodeAll(t, APIAnthropicMessages, tc.evs)
			if reason != tc.reason {
				t.Fatalf("reason %q, want %q", reason, tc.reason)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("events\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestAnthropicOpenBlocksBounded(t *testing.T) {
	d := AnthropicMessages{}.NewDecoder()
	if _, err := d.Decode("", []byte(`{"type":"message_start","message":{"model":"c"}}`)); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; i <= anthMaxOpenBlocks && err == nil; i++ {
		_, err = d.Decode("", fmt.Appendf(nil, `{"type":"content_block_start","index":%d,"content_block":{"type":"text"}}`, i))
	}
	if r, _ := ReasonOf(err); r != ledger.ReasonProtocolError {
		t.Fatalf("opening %d blocks: err %v, want a protocol error", anthMaxOpenBlocks+1, err)
	}
}
