package protocol

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

func TestOpenAIChatDecode(t *testing.T) {
	type step struct {
		name, data string
		want       Event
		reason     ledger.Reason // expected decode error reason, "" = none
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "role-only and empty deltas are not content", steps: []step{
			{data: `{"model":"m","choices":[{"index":0,"delta":{"role":"assistant"}}]}`, want: Event{Model: "m"}},
			{data: `{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`},
			{data: `{"choices":[{"index":0,"delta":{"content":null}}]}`},
			{data: `{"choices":[{"index":0,"delta":{"content":" "}}]}`, want: Event{Content: true}},
		}},
		{name: "reasoning then content", steps: []step{
			{data: `{"choices":[{"delta":{"reasoning_content":"hmm"}}]}`, want: Event{Reasoning: true}},
			{data: `{"choices":[{"delta":{"reasoning":"so"}}]}`, want: Event{Reasoning: true}},
			{data: `{"choices":[{"delta":{"reasoning_content":"","content":"Hi"}}]}`, want: Event{Content: true}},
		}},
		{name: "finish, usage-only final chunk, done", steps: []step{
			{data: `{"choices":[{"delta":{"content":"x"},"finish_reason":null}]}`, want: Event{Content: true}},
			{data: `{"choices":[{"delta":{},"finish_reason":"length"}]}`, want: Event{FinishReason: "length"}},
			{data: `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":1}}}`,
				want: Event{Usage: &ledger.Usage{Known: true, Prompt: 5, Completion: 2, Reasoning: 1}}},
			{data: ` [DONE] `, want: Event{Done: true}},
			{data: `{"choices":[{"delta":{"content":"late"}}]}`, reason: ledger.ReasonDataAfterDone},
		}},
		{name: "usage deltas give tokens per chunk", steps: []step{
			{data: `{"choices":[{"delta":{"role":"assistant"}}],"usage":{"prompt_tokens":5,"completion_tokens":0}}`,
				want: Event{Usage: &ledger.Usage{Known: true, Prompt: 5}}},
			{data: `{"choices":[{"delta":{"content":"ab"}}],"usage":{"prompt_tokens":5,"completion_tokens":2}}`,
				want: Event{Content: true, Tokens: 2, Usage: &ledger.Usage{Known: true, Prompt: 5, Completion: 2}}},
			{data: `{"choices":[{"delta":{"content":"c"}}],"usage":{"prompt_tokens":5,"completion_tokens":3}}`,
				want: Event{Content: true, Tokens: 1, Usage: &ledger.Usage{Known: true, Prompt: 5, Completion: 3}}},
			{data: `{"choices":[{"delta":{"content":"d"}}]}`, want: Event{Content: true}},
			{data: `{"choices":[{"delta":{"content":"e"}}],"usage":{"completion_tokens":5}}`,
				want: Event{Content: true, Usage: &ledger.Usage{Known: true, Completion: 5}}},
		}},
		{name: "in-band errors keep type, code and message as sent (the Client cleans them)", steps: []step{
			{data: `{"error":{"message":"your prompt was bad","type":"invalid_request_error","code":"context_length_exceeded"}}`,
				want: Event{Err: &ServerError{Type: "invalid_request_error", Code: "context_length_exceeded", Message: "your prompt was bad"}}},
			{data: `{"error":{"message":"x","code":503}}`, want: Event{Err: &ServerError{Type: "error", Code: "503", Message: "x"}}},
			{data: `{"error":"prompt text echoed"}`, want: Event{Err: &ServerError{Type: "error", Message: "prompt text echoed"}}},
			{data: `{"error":null,"choices":[{"delta":{"content":"ok"}}]}`, want: Event{Content: true}},
			{name: "error", data: `{"message":"x"}`, want: Event{Err: &ServerError{Type: "error", Message: "x"}}},
			{name: "error", data: `{"code":500,"message":"Failed to parse input","type":"server_error"}`, want: Event{Err: &ServerError{Type: "server_error", Code: "500", Message: "Failed to parse input"}}},
		}},
		{name: "server finish reasons are passed on as sent (the Client cleans them)", steps: []step{
			{data: `{"choices":[{"delta":{},"finish_reason":"end turn <b>` + strings.Repeat("x", 60) + `"}]}`,
				want: Event{FinishReason: "end turn <b>" + strings.Repeat("x", 60)}},
			{data: `{"choices":[{"delta":{},"finish_reason":"a\nb\u0000c"}]}`, want: Event{FinishReason: "a\nb\x00c"}},
		}},
		{name: "malformed", steps: []step{
			{data: `{"choices":[`, reason: ledger.ReasonMalformed},
		}},
		{name: "not an object", steps: []step{
			{data: `[1,2]`, reason: ledger.ReasonMalformed},
		}},
		{name: "empty data is nothing", steps: []step{{data: ""}, {data: "  "}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := OpenAIChat{}.NewDecoder()
			for i, s := range tt.steps {
				got, err := d.Decode(s.name, []byte(s.data))
				if s.reason != "" {
					r, ok := ReasonOf(err)
					if !ok || r != s.reason {
						t.Fatalf("step %d: err %v (reason %q), want reason %q", i, err, r, s.reason)
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if !sameEvent(got, s.want) {
					t.Errorf("step %d: got %+v (usage %+v err %+v), want %+v (usage %+v err %+v)", i, got, got.Usage, got.Err, s.want, s.want.Usage, s.want.Err)
				}
			}
		})
	}
}

func sameEvent(a, b Event) bool {
	if (a.Usage == nil) != (b.Usage == nil) || (a.Usage != nil && *a.Usage != *b.Usage) {
		return false
	}
	if (a.Err == nil) != (b.Err == nil) || (a.Err != nil && *a.Err != *b.Err) {
		return false
	}
	a.Usage, b.Usage, a.Err, b.Err = nil, nil, nil, nil
	return a == b
}

func TestOpenAIChatRequest(t *testing.T) {
	tests := []struct {
		name     string
		base     string
		p        Params
		wantURL  string
		wantBody string
	}{
		{name: "prompt as one user message", base: "http://127.0.0.1:8000/v1", p: Params{Model: "m", Prompt: "hi", MaxTokens: 16},
			wantURL:  "http://127.0.0.1:8000/v1/chat/completions",
			wantBody: `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true}}`},
		{name: "messages, usage deltas, trailing slash", base: "https://127.0.0.1/api/v1/", p: Params{Messages: []Message{{"system", "s"}, {"user", "u"}}, UsageDeltas: true},
			wantURL:  "https://127.0.0.1/api/v1/chat/completions",
			wantBody: `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := OpenAIChat{}.NewRequest(context.Background(), tt.base, tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if req.Method != "POST" || req.URL.String() != tt.wantURL || req.Header.Get("Content-Type") != "application/json" || req.Header.Get("Accept") != "text/event-stream" {
				t.Errorf("%s %s %v", req.Method, req.URL, req.Header)
			}
			b, _ := io.ReadAll(req.Body)
			var got, want any
			json.Unmarshal(b, &got)
			json.Unmarshal([]byte(tt.wantBody), &want)
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if string(gb) != string(wb) {
				t.Errorf("body %s, want %s", gb, wb)
			}
		})
	}
	for _, bad := range []string{"", "127.0.0.1:8000", "ftp://x/v1", "http://", "://x"} {
		if _, err := (OpenAIChat{}).NewRequest(context.Background(), bad, Params{}); err == nil {
			t.Errorf("base %q accepted", bad)
		}
	}
}

func FuzzOpenAIChatDecode(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"delta":{"content":"x"}}]}`, `[DONE]`, `{"error":{"type":"t","code":1}}`,
		`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}`, `{"choices":[{"delta":{"reasoning":"r"},"finish_reason":"stop"}]}`,
	} {
		f.Add("", []byte(s))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		d := OpenAIChat{}.NewDecoder()
		for range 2 {
			ev, err := d.Decode(name, data)
			if err != nil {
				if r, ok := ReasonOf(err); !ok || !ledger.Valid(ledger.StreamError, r) {
					t.Fatalf("error %v carries no stream_error reason", err)
				}
				continue
			}
			if ev.Tokens < 0 {
				t.Fatalf("negative tokens %d", ev.Tokens)
			}
		}
	})
}

func BenchmarkOpenAIChatDecode(b *testing.B) {
	chunk := []byte(`{"id":"chatcmpl-8f3a","object":"chat.completion.chunk","created":1700000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}`)
	d := OpenAIChat{}.NewDecoder()
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		if ev, err := d.Decode("", chunk); err != nil || !ev.Content {
			b.Fatal(ev, err)
		}
	}
}
