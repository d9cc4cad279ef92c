package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/protocol/replay"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// The captured llama.cpp fixtures (testdata/streams/*/llamacpp_*) are bytes
// a real llama-server wrote. TestCaptureLlamaCpp regenerates them; it runs
// only when asked:
//
//	LLMPROBE_CAPTURE_LLAMACPP=1 go test ./internal/protocol -run TestCaptureLlamaCpp
//
// It starts the staged server (LLMPROBE_LLAMACPP_DIR, default
// ../shared/engines/llama.cpp next to the repository) with its start.sh on
// a free loopback port, posts each request of llamaCaptures (only those
// named in LLMPROBE_CAPTURE_ONLY, "api/name,…", when it is set; a capture's
// warm-up request first), and writes the
// body byte for byte to <name>.sse. In <name>.json it sets captured, path
// and request and keeps everything else (about, source, timing, expect): the
// expectations are written by hand from the bytes, never by this parser.
// A capture with no .json yet gets a placeholder expectation that the
// fixture tests then reject until it is filled in.

// llamaCapture is one request to capture.
type llamaCapture struct {
	api, name, path string
	about           string
	request         string
	warm            string // sent first, its answer discarded (fills the prompt cache); "" = none
}

// llamaPrefix is a shared system prompt of about 1,000 tokens for the tiny
// model's tokenizer (545 words: with the chat template, the 1,015 tokens llama-server then reports cached), the
// same every run.
var llamaPrefix = func() string {
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu")
	out := make([]string, 545)
	for i := range out {
		out[i] = words[(i*7)%len(words)]
	}
	return strings.Join(out, " ")
}()

// prefixChat is a chat request: the shared prefix as the system message and
// a user message of its own.
func prefixChat(user string) string {
	b, _ := json.Marshal(map[string]any{
		"model": "tiny", "max_tokens": 8, "stream": true, "stream_options": map[string]bool{"include_usage": true},
		"temperature": 0, "seed": 42,
		"messages": []map[string]string{{"role": "system", "content": llamaPrefix}, {"role": "user", "content": user}},
	})
	return string(b)
}

// prefixMessages is prefixChat's request on the Anthropic Messages API.
func prefixMessages(user string) string {
	b, _ := json.Marshal(map[string]any{
		"model": "tiny", "max_tokens": 8, "stream": true, "temperature": 0, "system": llamaPrefix,
		"messages": []map[string]string{{"role": "user", "content": user}},
	})
	return string(b)
}

// llamaCaptures: greedy sampling (temperature 0, a fixed seed) so that a
// rerun against the same build gives the same tokens. "logit_bias" on token
// 131 (<0x80>, a lone UTF-8 continuation byte) makes the server's UTF-8
// check fail: its in-band error, on demand (engine README, "Quirks").
var llamaCaptures = []llamaCapture{
	{api: APIOpenAIChat, name: "llamacpp_usage", path: "/v1/chat/completions",
		about:   "llama.cpp chat with stream_options.include_usage: role chunk, one chunk per token, a finish chunk with timings, a usage chunk (choices []) with timings, [DONE]",
		request: `{"model":"tiny","messages":[{"role":"user","content":"Say hello"}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true},"temperature":0,"seed":42}`},
	{api: APIOpenAIChat, name: "llamacpp_in_band_error", path: "/v1/chat/completions",
		about:   "llama.cpp chat whose generated text is not valid UTF-8: a role chunk, then data: {\"error\":{\"code\":500,…}} and the body ends (no finish reason, no usage, no [DONE])",
		request: `{"model":"tiny","messages":[{"role":"user","content":"Say hello"}],"max_tokens":8,"stream":true,"stream_options":{"include_usage":true},"temperature":0,"seed":42,"logit_bias":{"131":100}}`},
	{api: APIOpenAICompletions, name: "llamacpp_normal", path: "/v1/completions",
		about:   "llama.cpp completions: one chunk per token; the last carries finish_reason, usage and timings; [DONE]",
		request: `{"model":"tiny","prompt":"Say hello","max_tokens":16,"stream":true,"stream_options":{"include_usage":true},"temperature":0,"seed":42}`},
	{api: APIOpenAICompletions, name: "llamacpp_in_band_error", path: "/v1/completions",
		about:   "llama.cpp completions whose first token is not valid UTF-8: only data: {\"error\":{\"code\":500,…}}, then the body ends",
		request: `{"model":"tiny","prompt":"Say hello","max_tokens":8,"stream":true,"temperature":0,"seed":42,"logit_bias":{"131":100}}`},
	{api: APIOpenAIResponses, name: "llamacpp_max_output_tokens", path: "/v1/responses",
		about:   "llama.cpp Responses cut by max_output_tokens: it ends with response.completed (status completed, no incomplete_details), not response.incomplete",
		request: `{"model":"tiny","input":"Say hello","max_output_tokens":8,"stream":true,"temperature":0,"seed":42}`},
	{api: APIOpenAIResponses, name: "llamacpp_in_band_error", path: "/v1/responses",
		about:   "llama.cpp Responses whose text is not valid UTF-8: response.created, response.in_progress, then a bare data: {\"error\":…} line (no event: line, no response.failed) and the body ends",
		request: `{"model":"tiny","input":"Say hello","max_output_tokens":8,"stream":true,"temperature":0,"seed":42,"logit_bias":{"131":100}}`},
	{api: APIAnthropicMessages, name: "llamacpp_normal", path: "/v1/messages",
		about:   "llama.cpp Anthropic Messages: message_start (cached input in cache_read_input_tokens), one text block, message_delta with stop_reason and usage, message_stop; no ping",
		request: `{"model":"tiny","messages":[{"role":"user","content":"Say hello"}],"max_tokens":16,"stream":true,"temperature":0}`},
	{api: APIOpenAIChat, name: "llamacpp_cached_prefix", path: "/v1/chat/completions",
		about:   "llama.cpp chat whose ~1,000-token system prompt a warm-up request (the same prefix, another user message) had just sent: usage.prompt_tokens_details.cached_tokens and timings.cache_n count the prefix read from the prompt cache, timings.prompt_n only the rest",
		request: prefixChat("What is the second question?"), warm: prefixChat("What is the first question?")},
	{api: APIAnthropicMessages, name: "llamacpp_cached_prefix", path: "/v1/messages",
		about:   "llama.cpp Anthropic Messages with the same ~1,000-token system prompt just sent by a warm-up chat request: message_start counts the cached prefix in cache_read_input_tokens and only the rest in input_tokens",
		request: prefixMessages("What is the third question?"), warm: prefixChat("What is the first question?")},
}

func TestCaptureLlamaCpp(t *testing.T) {
	if os.Getenv("LLMPROBE_CAPTURE_LLAMACPP") != "1" {
		t.Skip("set LLMPROBE_CAPTURE_LLAMACPP=1 to regenerate the llama.cpp fixtures from a real server")
	}
	if testutil.LlamaCppDir() == "" {
		t.Fatalf("llama.cpp engine not found (%s)", testutil.LlamaCppDirEnv)
	}
	base := testutil.StartLlamaCpp(t).URL()
	date := time.Now().UTC().Format("2006-01-02")
	only := map[string]bool{}
	for _, id := range strings.Split(os.Getenv("LLMPROBE_CAPTURE_ONLY"), ",") {
		if id = strings.TrimSpace(id); id != "" {
			only[id] = true
		}
	}
	for _, c := range llamaCaptures {
		if len(only) > 0 && !only[c.api+"/"+c.name] {
			continue
		}
		if c.warm != "" {
			capture(t, base+"/v1/chat/completions", c.warm)
		}
		body := capture(t, base+c.path, c.request)
		fdir := filepath.Join(fixturesRoot, c.api)
		if err := os.WriteFile(filepath.Join(fdir, c.name+".sse"), body, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := writeCaptureSpec(filepath.Join(fdir, c.name+".json"), c, date); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s/%s: %d bytes", c.api, c.name, len(body))
	}
}

// capture posts one request and returns the response body as sent.
func capture(t *testing.T, url, request string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(request))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Close = true // a connection of its own: llama-server may close one after a stream
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !isEventStream(resp.Header.Get("Content-Type")) {
		t.Fatalf("%s: status %d, content type %q", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return body
}

// writeCaptureSpec sets captured, path and request in a fixture's spec,
// keeping its other members (a new spec gets a placeholder expectation).
func writeCaptureSpec(path string, c llamaCapture, date string) error {
	spec := map[string]json.RawMessage{}
	if raw, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(raw, &spec); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	} else {
		spec["expect"] = json.RawMessage(`{"outcome":"ok","reason":"other","content_events":-1,"reasoning_events":0,"done":false}`)
		spec["first_ms"] = json.RawMessage(`5`)
		spec["gap_ms"] = json.RawMessage(`1`)
	}
	set := func(k string, v any) {
		b, _ := json.Marshal(v)
		spec[k] = b
	}
	set("about", c.about)
	set("source", "captured from a real llama.cpp llama-server (see testdata/streams/LLAMACPP.md)")
	set("captured", "llama.cpp llama-server e95dae18d, tiny.gguf, "+date)
	set("path", c.path)
	spec["request"] = json.RawMessage(c.request)
	// A stable member order, as the hand-written fixtures have.
	var b bytes.Buffer
	b.WriteString("{\n")
	keys := []string{"about", "source", "captured", "path", "request", "status", "content_type", "headers_ms", "first_ms", "gap_ms", "delays_ms", "limits", "expect"}
	first := true
	for _, k := range keys {
		v, ok := spec[k]
		if !ok {
			continue
		}
		if !first {
			b.WriteString(",\n")
		}
		first = false
		var ind bytes.Buffer
		if err := json.Indent(&ind, v, "  ", "  "); err != nil {
			return err
		}
		fmt.Fprintf(&b, "  %q: %s", k, ind.Bytes())
	}
	b.WriteString("\n}\n")
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// TestLlamaCppFixtures keeps the captured fixtures and the capture table in
// step: every capture has its fixture, which says where it came from and
// holds the very request the table sends (what the fixtures assert is
// checked with every other fixture by TestFixturesDecode and
// TestFixturesClient).
func TestLlamaCppFixtures(t *testing.T) {
	byID := map[string]bool{}
	for _, f := range loadFixtures(t) {
		if strings.HasPrefix(f.Name, "llamacpp_") {
			byID[f.ID()] = true
		}
	}
	for _, c := range llamaCaptures {
		id := c.api + "/" + c.name
		t.Run(id, func(t *testing.T) {
			if !byID[id] {
				t.Fatal("no fixture: run TestCaptureLlamaCpp")
			}
			delete(byID, id)
			f, err := replay.Load(filepath.Join(fixturesRoot, c.api), c.name)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(f.Spec.Captured, "llama.cpp llama-server") || f.Spec.Path != c.path {
				t.Errorf("captured %q path %q, want a llama.cpp capture of %s", f.Spec.Captured, f.Spec.Path, c.path)
			}
			var got, want any
			if json.Unmarshal(f.Spec.Request, &got) != nil || json.Unmarshal([]byte(c.request), &want) != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("request %s, the capture table sends %s", f.Spec.Request, c.request)
			}
			// The OpenAI-style streams end with llama.cpp's own timings.
			openAI := c.api == APIOpenAIChat || c.api == APIOpenAICompletions
			final := bytes.Contains(f.Body, []byte(`"usage":{`)) && bytes.Contains(f.Body, []byte(`"timings":{`))
			if openAI && !strings.Contains(c.name, "error") && !final {
				t.Errorf("the capture lacks llama.cpp's final usage with timings")
			}
		})
	}
	for id := range byID {
		t.Errorf("fixture %s is not in the capture table", id)
	}
}
