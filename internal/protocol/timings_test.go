package protocol

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Streams llama.cpp (the build in ../shared/engines/llama.cpp, commit
// e95dae18d) wrote, byte for byte: chat with include_usage (the usage chunk
// carries timings; this build's finish chunk does not) and completions
// (the last chunk carries usage and timings).
const (
	llamaChatStream = `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1796170098,"id":"chatcmpl-cARyyxt86wonGWp9W8DHTm0eD8vj99f5","model":"tiny","system_fingerprint":"b0-e95dae18d","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":" Publish"}}],"created":1796170098,"id":"chatcmpl-cARyyxt86wonGWp9W8DHTm0eD8vj99f5","model":"tiny","system_fingerprint":"b0-e95dae18d","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Dr"}}],"created":1796170098,"id":"chatcmpl-cARyyxt86wonGWp9W8DHTm0eD8vj99f5","model":"tiny","system_fingerprint":"b0-e95dae18d","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"秋"}}],"created":1796170098,"id":"chatcmpl-cARyyxt86wonGWp9W8DHTm0eD8vj99f5","model":"tiny","system_fingerprint":"b0-e95dae18d","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":"length","index":0,"delta":{}}],"created":1796170098,"id":"chatcmpl-cARyyxt86wonGWp9W8DHTm0eD8vj99f5","model":"tiny","system_fingerprint":"b0-e95dae18d","object":"chat.completion.chunk"}

data: {"choices":[],"created":1796170098,"id":"chatcmpl-cARyyxt86wonGWp9W8DHTm0eD8vj99f5","model":"tiny","system_fingerprint":"b0-e95dae18d","object":"chat.completion.chunk","usage":{"completion_tokens":3,"prompt_tokens":29,"total_tokens":32,"prompt_tokens_details":{"cached_tokens":0}},"timings":{"cache_n":0,"prompt_n":29,"prompt_ms":31.521,"prompt_per_token_ms":1.0869310344827587,"prompt_per_second":920.0215729196409,"predicted_n":3,"predicted_ms":15.363,"predicted_per_token_ms":5.1209999999999996,"predicted_per_second":195.27436047646944}}

data: [DONE]

`
	llamaCompletionsStream = `data: {"choices":[{"text":"imiter","index":0,"logprobs":null,"finish_reason":null}],"created":1796170098,"model":"tiny","system_fingerprint":"b0-e95dae18d","object":"text_completion","id":"chatcmpl-wc1Y8mbJsAQrxf33NAmdkbTu8njF8Cao"}

data: {"choices":[{"text":" List","index":0,"logprobs":null,"finish_reason":null}],"created":1796170098,"model":"tiny","system_fingerprint":"b0-e95dae18d","object":"text_completion","id":"chatcmpl-wc1Y8mbJsAQrxf33NAmdkbTu8njF8Cao"}

data: {"choices":[{"text":" receiving","index":0,"logprobs":null,"finish_reason":null}],"created":1796170098,"model":"tiny","system_fingerprint":"b0-e95dae18d","object":"text_completion","id":"chatcmpl-wc1Y8mbJsAQrxf33NAmdkbTu8njF8Cao"}

data: {"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"length"}],"created":1796170098,"model":"tiny","system_fingerprint":"b0-e95dae18d","object":"text_completion","usage":{"completion_tokens":3,"prompt_tokens":2,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":1}},"id":"chatcmpl-wc1Y8mbJsAQrxf33NAmdkbTu8njF8Cao","timings":{"cache_n":1,"prompt_n":1,"prompt_ms":2.306,"prompt_per_token_ms":2.306,"prompt_per_second":433.6513443191674,"predicted_n":3,"predicted_ms":10.031,"predicted_per_token_ms":3.343666666666667,"predicted_per_second":299.07287409031994}}

data: [DONE]

`
)

// TestServerTimingsFromStream: the Client records llama.cpp's timings from
// the streams it writes, through the real adapters; a stream without them
// leaves server_timings absent.
func TestServerTimingsFromStream(t *testing.T) {
	tests := []struct {
		name, body string
		adapter    Adapter
		want       *ledger.ServerTimings
	}{
		{"chat", llamaChatStream, OpenAIChat{}, &ledger.ServerTimings{PromptN: 29, PromptMS: 31.521, PromptPerTokenMS: 1.0869310344827587,
			PredictedN: 3, PredictedMS: 15.363, PredictedPerTokenMS: 5.1209999999999996}},
		{"completions", llamaCompletionsStream, OpenAICompletions{}, &ledger.ServerTimings{CacheN: 1, PromptN: 1, PromptMS: 2.306, PromptPerTokenMS: 2.306,
			PredictedN: 3, PredictedMS: 10.031, PredictedPerTokenMS: 3.343666666666667}},
		{"chat without timings", strings.ReplaceAll(llamaChatStream, `"timings"`, `"other"`), OpenAIChat{}, nil},
		{"hostile timings", strings.Replace(llamaCompletionsStream, `"prompt_ms":2.306`, `"prompt_ms":-2.306`, 1), OpenAICompletions{}, &ledger.ServerTimings{Invalid: true}},
	}
	c, err := NewClient(ClientOptions{Timeouts: Timeouts{Total: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			l := ledger.New(time.Now())
			rec := l.Plan(ledger.Meta{Target: "t"}, l.Now())
			res := c.Do(context.Background(), Target{Base: srv.URL, Adapter: tt.adapter}, Params{}, rec, l.Now, func() { l.MarkDispatched(rec) })
			if res.Outcome != ledger.OK || !rec.Usage.Known {
				t.Fatalf("result %+v, usage %+v: want ok with usage", res, rec.Usage)
			}
			switch {
			case tt.want == nil && rec.ServerTimings != nil:
				t.Errorf("server timings %+v, want none", *rec.ServerTimings)
			case tt.want != nil && (rec.ServerTimings == nil || *rec.ServerTimings != *tt.want):
				t.Errorf("server timings %+v, want %+v", rec.ServerTimings, *tt.want)
			}
			gap, ok := rec.PrefillGap()
			if valid := tt.want != nil && !tt.want.Invalid; ok != valid {
				t.Errorf("prefill gap defined %v, want %v", ok, valid)
			} else if ok {
				ttft, _ := rec.TTFTFromDispatch()
				if want := ttft - time.Duration(tt.want.PromptMS*1e6); gap-want > time.Microsecond || want-gap > time.Microsecond {
					t.Errorf("prefill gap %v, want %v", gap, want)
				}
			}
		})
	}
}

// TestParseTimings: what a timings member must be to be believed; every
// hostile value is Invalid, never a figure or a panic.
func TestParseTimings(t *testing.T) {
	ok := `{"cache_n":0,"prompt_n":31,"prompt_ms":3.441,"prompt_per_token_ms":0.111,"predicted_n":32,"predicted_ms":12.4,"predicted_per_token_ms":0.387}`
	good := ledger.ServerTimings{PromptN: 31, PromptMS: 3.441, PromptPerTokenMS: 0.111, PredictedN: 32, PredictedMS: 12.4, PredictedPerTokenMS: 0.387}
	bad := ledger.ServerTimings{Invalid: true}
	tests := []struct {
		name, chunk string
		want        ledger.ServerTimings
		present     bool
	}{
		{"valid", `{"choices":[],"timings":` + ok + `}`, good, true},
		{"extra fields kept out", `{"timings":{"prompt_n":31,"prompt_ms":3.441,"prompt_per_token_ms":0.111,"predicted_n":32,"predicted_ms":12.4,"predicted_per_token_ms":0.387,"prompt_per_second":9000,"draft_n":3}}`, good, true},
		{"absent", `{"choices":[]}`, ledger.ServerTimings{}, false},
		{"null", `{"timings":null}`, ledger.ServerTimings{}, false},
		{"in content only", `{"choices":[{"delta":{"content":"\"timings\":{}"}}]}`, ledger.ServerTimings{}, false},
		{"nested, not top level", `{"usage":{"timings":` + ok + `}}`, ledger.ServerTimings{}, false},
		{"negative time", `{"timings":{"prompt_ms":-1}}`, bad, true},
		{"negative count", `{"timings":{"predicted_n":-3}}`, bad, true},
		{"fractional count", `{"timings":{"prompt_n":1.5}}`, bad, true},
		{"huge count", `{"timings":{"prompt_n":1e12}}`, bad, true},
		{"huge time", `{"timings":{"predicted_ms":1e300}}`, bad, true},
		{"overflowing number", `{"timings":{"predicted_ms":1e400}}`, bad, true},
		{"string value", `{"timings":{"prompt_ms":"3.4"}}`, bad, true},
		{"not an object", `{"timings":[1,2]}`, bad, true},
		{"a string", `{"timings":"fast"}`, bad, true},
		{"invalid JSON", `{"timings":{"prompt_ms":NaN}}`, ledger.ServerTimings{}, false},
	}
	for _, tt := range tests {
		got, present := parseTimings([]byte(tt.chunk))
		if got != tt.want || present != tt.present {
			t.Errorf("%s: parseTimings = %+v, %v; want %+v, %v", tt.name, got, present, tt.want, tt.present)
		}
	}
}
