package protocol

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// ObserveFirstToken calls its function once per stream, when the first
// token under the TTFT boundary is decoded (a role-only chunk is not one;
// reasoning is one only for any_token), and changes nothing the client
// records.
func TestObserveFirstToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for i, ev := range []string{
			`{"choices":[{"delta":{"role":"assistant","content":""}}]}`,
			`{"choices":[{"delta":{"reasoning_content":"hmm"}}]}`,
			`{"choices":[{"delta":{"content":"hel"}}]}`,
			`{"choices":[{"delta":{"content":"lo"},"finish_reason":"stop"}]}`,
			`[DONE]`,
		} {
			if i == 2 {
				time.Sleep(30 * time.Millisecond) // reasoning well before content
			}
			_, _ = w.Write([]byte("data: " + ev + "\n\n"))
			fl.Flush()
		}
	}))
	defer srv.Close()
	c, err := NewClient(ClientOptions{NoProxy: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for _, anyToken := range []bool{false, true} {
		start := time.Now()
		now := func() time.Duration { return time.Since(start) + 1 }
		calls, mark := 0, time.Duration(0)
		tgt := Target{Base: srv.URL, Adapter: ObserveFirstToken(OpenAIChat{}, anyToken, func() { calls++; mark = now() })}
		rec := &ledger.Record{}
		res := c.Do(context.Background(), tgt, Params{Model: "m", MaxTokens: 4}, rec, now, func() { rec.Dispatched = now() })
		if res.Outcome != ledger.OK || rec.ContentEvents != 2 || rec.ReasoningEvents != 1 {
			t.Fatalf("anyToken %v: result %+v, %d content and %d reasoning events: the observer changed the stream", anyToken, res, rec.ContentEvents, rec.ReasoningEvents)
		}
		if calls != 1 {
			t.Fatalf("anyToken %v: called %d times, want once", anyToken, calls)
		}
		first, before := rec.FirstContent, rec.FirstReasoning
		if anyToken {
			first, before = rec.FirstReasoning, rec.Headers
		}
		if mark > first || mark < before {
			t.Errorf("anyToken %v: marked at %v, want at the first token (%v), after %v", anyToken, mark, first, before)
		}
		if tgt.Adapter.Name() != "openai-chat" {
			t.Errorf("name %q", tgt.Adapter.Name())
		}
	}
}

// TestObserveFirstTokenKeepsAuth: the wrapper sends the key as the wrapped
// API takes it (a ladder on an Anthropic target must send x-api-key and
// anthropic-version, never Authorization: Bearer).
func TestObserveFirstTokenKeepsAuth(t *testing.T) {
	type seen struct{ auth, key, version string }
	got := make(chan seen, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("Anthropic-Version")}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	t.Setenv("LLMPROBE_TEST_OBSERVE_KEY", "sk-ant-observe")
	c, err := NewClient(ClientOptions{NoProxy: true, Auth: AuthOptions{KeyEnv: "LLMPROBE_TEST_OBSERVE_KEY"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for _, tc := range []struct {
		name string
		a    Adapter
		want seen
	}{
		{"anthropic", ObserveFirstToken(AnthropicMessages{}, false, func() {}), seen{"", "sk-ant-observe", DefaultAnthropicVersion}},
		{"openai", ObserveFirstToken(OpenAIChat{}, false, func() {}), seen{"Bearer sk-ant-observe", "", ""}},
	} {
		start := time.Now()
		now := func() time.Duration { return time.Since(start) + 1 }
		rec := &ledger.Record{}
		c.Do(context.Background(), Target{Base: srv.URL, Adapter: tc.a}, Params{Model: "m", MaxTokens: 4}, rec, now, func() {})
		if s := <-got; s != tc.want {
			t.Errorf("%s observed: sent Authorization %q, x-api-key %q, anthropic-version %q; want %+v", tc.name, s.auth, s.key, s.version, tc.want)
		}
	}
}
