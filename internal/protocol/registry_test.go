package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol/sse"
)

func TestRegistry(t *testing.T) {
	want := []string{APIAnthropicMessages, APIOpenAIChat, APIOpenAICompletions, APIOpenAIResponses}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, n := range Names() {
		a, err := Lookup(n)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", n, err)
		}
		if a.Name() != n {
			t.Errorf("Lookup(%q).Name() = %q", n, a.Name())
		}
		if a.NewDecoder() == nil {
			t.Errorf("%s: nil decoder", n)
		}
	}
	if _, err := Lookup(DefaultAPI); err != nil {
		t.Errorf("default api %q is not registered: %v", DefaultAPI, err)
	}
	_, err := Lookup("openai-chatt")
	if err == nil {
		t.Fatal("Lookup of an unknown name succeeded")
	}
	for _, n := range Names() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("unknown-name error %q does not list %q", err, n)
		}
	}
}

// TestAuthStyle: each API's key style, also through ObserveFirstToken's
// wrapper (the ladder wraps every request's adapter: an Anthropic ladder
// once sent Authorization: Bearer because the wrapper hid the style).
func TestAuthStyle(t *testing.T) {
	for _, tc := range []struct {
		api  string
		want AuthStyle
	}{
		{APIOpenAIChat, AuthBearer},
		{APIOpenAICompletions, AuthBearer},
		{APIOpenAIResponses, AuthBearer},
		{APIAnthropicMessages, AuthXAPIKey},
	} {
		a, err := Lookup(tc.api)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.AuthStyle(); got != tc.want {
			t.Errorf("%s: auth style %q, want %q", tc.api, got, tc.want)
		}
		if got := ObserveFirstToken(a, false, nil).AuthStyle(); got != tc.want {
			t.Errorf("%s observed for its first token: auth style %q, want %q", tc.api, got, tc.want)
		}
	}
}

func TestReasonOf(t *testing.T) {
	base := decodeErr("x", ledger.ReasonMalformed, "bad")
	if r, ok := ReasonOf(fmt.Errorf("wrapped: %w", base)); !ok || r != ledger.ReasonMalformed {
		t.Errorf("ReasonOf(wrapped) = %q, %v", r, ok)
	}
	if _, ok := ReasonOf(errors.New("plain")); ok {
		t.Error("ReasonOf(plain error) reported a reason")
	}
	if _, ok := ReasonOf(nil); ok {
		t.Error("ReasonOf(nil) reported a reason")
	}
}

// TestNewRequest checks each of this file's adapters builds the documented
// streaming request: path, method, headers and body fields.
func TestNewRequest(t *testing.T) {
	msgs := []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}
	for _, tc := range []struct {
		api    string
		p      Params
		path   string
		body   map[string]any
		absent []string
	}{
		{
			api: APIOpenAICompletions, p: Params{Model: "m", Prompt: "once", MaxTokens: 7},
			path: "/v1/completions",
			body: map[string]any{"model": "m", "prompt": "once", "max_tokens": 7.0, "stream": true,
				"stream_options": map[string]any{"include_usage": true}},
		},
		{
			api: APIOpenAICompletions, p: Params{Model: "m", Messages: msgs, UsageDeltas: true},
			path: "/v1/completions",
			body: map[string]any{"model": "m", "prompt": "be brief\n\nhi", "stream": true,
				"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true}},
			absent: []string{"max_tokens"},
		},
		{
			api: APIOpenAIResponses, p: Params{Model: "m", Messages: msgs, MaxTokens: 9},
			path: "/v1/responses",
			body: map[string]any{"model": "m", "max_output_tokens": 9.0, "stream": true, "store": false,
				"input": []any{map[string]any{"role": "system", "content": "be brief"}, map[string]any{"role": "user", "content": "hi"}}},
			absent: []string{"max_tokens", "stream_options"},
		},
		{
			api: APIOpenAIResponses, p: Params{Model: "m", Prompt: "hello"},
			path: "/v1/responses",
			body: map[string]any{"model": "m", "input": "hello", "stream": true, "store": false},
		},
		{
			api: APIAnthropicMessages, p: Params{Model: "c", Messages: msgs, MaxTokens: 5},
			path: "/v1/messages",
			body: map[string]any{"model": "c", "system": "be brief", "max_tokens": 5.0, "stream": true,
				"messages": []any{map[string]any{"role": "user", "content": "hi"}}},
		},
		{
			api: APIAnthropicMessages, p: Params{Model: "c", Prompt: "hello"},
			path: "/v1/messages",
			body: map[string]any{"model": "c", "max_tokens": float64(anthDefaultMaxTokens), "stream": true,
				"messages": []any{map[string]any{"role": "user", "content": "hello"}}},
			absent: []string{"system"},
		},
	} {
		t.Run(tc.api, func(t *testing.T) {
			a, err := Lookup(tc.api)
			if err != nil {
				t.Fatal(err)
			}
			req, err := a.NewRequest(context.Background(), "http://127.0.0.1:9/v1/", tc.p)
			if err != nil {
				t.Fatalf("NewRequest: %v", err)
			}
			if req.Method != "POST" || req.URL.Path != tc.path {
				t.Errorf("request %s %s, want POST %s", req.Method, req.URL.Path, tc.path)
			}
			if ct := req.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("content type %q", ct)
			}
			if acc := req.Header.Get("Accept"); acc != "text/event-stream" {
				t.Errorf("accept %q", acc)
			}
			if req.Header.Get("Authorization") != "" || req.Header.Get("X-Api-Key") != "" {
				t.Error("adapters must not set auth headers (the Client does)")
			}
			raw, err := io.ReadAll(req.Body)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("body is not JSON: %v", err)
			}
			for k, v := range tc.body {
				if !reflect.DeepEqual(got[k], v) {
					t.Errorf("body[%q] = %#v, want %#v", k, got[k], v)
				}
			}
			for _, k := range tc.absent {
				if _, ok := got[k]; ok {
					t.Errorf("body has %q, want it absent", k)
				}
			}
		})
	}
}

func TestNewRequestBadBase(t *testing.T) {
	for _, api := range []string{APIOpenAICompletions, APIOpenAIResponses, APIAnthropicMessages} {
		a, _ := Lookup(api)
		for _, base := range []string{"", "127.0.0.1:8000/v1", "ftp://h/v1", "http://user:s3cret@/v1", "http://%zz"} {
			_, err := a.NewRequest(context.Background(), base, Params{Model: "m", Prompt: "p"})
			if err == nil {
				t.Errorf("%s: base %q accepted", api, base)
				continue
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%s: error echoes the base URL: %v", api, err)
			}
		}
	}
}

// sseEv is one server-sent event for decoder tables.
type sseEv struct{ name, data string }

// decodeAll feeds evs to a fresh decoder of api and returns the events up
// to and including the first error, and that error's reason ("" if none).
func decodeAll(t *testing.T, api string, evs []sseEv) ([]Event, ledger.Reason) {
	t.Helper()
	a, err := Lookup(api)
	if err != nil {
		t.Fatal(err)
	}
	d := a.NewDecoder()
	var out []Event
	for _, e := range evs {
		ev, err := d.Decode(e.name, []byte(e.data))
		if err != nil {
			r, ok := ReasonOf(err)
			if !ok {
				t.Fatalf("decoder error without a reason: %v", err)
			}
			if !ledger.Valid(ledger.StreamError, r) {
				t.Fatalf("decoder reason %q is not a stream_error reason", r)
			}
			if strings.Contains(err.Error(), e.data) && len(e.data) > 8 {
				t.Fatalf("decoder error echoes the payload: %v", err)
			}
			return out, r
		}
		out = append(out, ev)
	}
	return out, ""
}

// BenchmarkDecode decodes each API's normal fixture (one stream per
// iteration) and reports the cost per event.
func BenchmarkDecode(b *testing.B) {
	for _, f := range loadFixtures(b) {
		if f.Name != "normal" {
			continue
		}
		a, err := Lookup(f.API)
		if err != nil {
			b.Fatal(err)
		}
		var evs []sseEv
		rd := sse.NewReader(bytesReader(f.Body), sse.Options{})
		for {
			e, err := rd.Next()
			if err != nil {
				break
			}
			evs = append(evs, sseEv{e.Name, string(e.Data)})
		}
		data := make([][]byte, len(evs))
		for i, e := range evs {
			data[i] = []byte(e.data)
		}
		b.Run(f.API, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := a.NewDecoder()
				for i, e := range evs {
					if _, err := d.Decode(e.name, data[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
		})
	}
}
