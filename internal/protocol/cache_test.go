package protocol

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol/replay"
)

// TestCachedTokensCheckedAtDecode: every API's cached prompt count is read
// into the record's usage, "not reported" stays unknown (not 0), and a
// count that cannot be true (negative, above the prompt, absurd) is dropped
// and flagged while the other counts stand and the stream is no failure.
func TestCachedTokensCheckedAtDecode(t *testing.T) {
	const prompt, completion = 1000, 3
	base := ledger.Usage{Known: true, Prompt: prompt, Completion: completion}
	with := func(f func(*ledger.Usage)) ledger.Usage { u := base; f(&u); return u }
	cases := []struct {
		name    string
		details string // the cached count member as sent, "" = absent
		want    ledger.Usage
		n       int
		known   bool
	}{
		{"absent", "", base, 0, false},
		{"null", "null", base, 0, false},
		{"zero", "0", with(func(u *ledger.Usage) { u.CachedPrompt = ledger.KnownCount(0) }), 0, true},
		{"part of the prompt", "800", with(func(u *ledger.Usage) { u.CachedPrompt = ledger.KnownCount(800) }), 800, true},
		{"negative", "-1", with(func(u *ledger.Usage) { u.CacheInvalid = true }), 0, false},
		{"more than the prompt", "1001", with(func(u *ledger.Usage) { u.CacheInvalid = true }), 0, false},
		{"int64 max", "9223372036854775807", with(func(u *ledger.Usage) { u.CacheInvalid = true }), 0, false},
	}
	openAI := func(d string) string {
		if d == "" {
			return ""
		}
		return `,"prompt_tokens_details":{"cached_tokens":` + d + `}`
	}
	streams := map[string]func(d string) string{
		APIOpenAIChat: func(d string) string {
			return "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n" +
				"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":3" + openAI(d) + "}}\n\ndata: [DONE]\n\n"
		},
		APIOpenAICompletions: func(d string) string {
			return "data: {\"choices\":[{\"text\":\"hi\",\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":3" + openAI(d) + "}}\n\ndata: [DONE]\n\n"
		},
		APIOpenAIResponses: func(d string) string {
			details := ""
			if d != "" {
				details = `,"input_tokens_details":{"cached_tokens":` + d + `}`
			}
			return "data: {\"type\":\"response.created\",\"response\":{}}\n\n" +
				"data: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\n" +
				"data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":1000,\"output_tokens\":3" + details + "}}}\n\n"
		},
		// Anthropic counts cache reads apart from input_tokens: input 200 +
		// reads d make a prompt of 1000 only when d is 800, so the stream
		// sends input_tokens as 1000 - d when d is a sane number.
		APIAnthropicMessages: func(d string) string {
			usage := `"input_tokens":1000`
			switch d {
			case "":
			case "0", "800":
				in := map[string]string{"0": "1000", "800": "200"}[d]
				usage = `"input_tokens":` + in + `,"cache_read_input_tokens":` + d
			default:
				usage += `,"cache_read_input_tokens":` + d
			}
			return "data: {\"type\":\"message_start\",\"message\":{\"usage\":{" + usage + "}}}\n\n" +
				"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"hi\"}}\n\n" +
				"data: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
				"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":3}}\n\n" +
				"data: {\"type\":\"message_stop\"}\n\n"
		},
	}
	c, err := NewClient(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for api, stream := range streams {
		for _, tc := range cases {
			want := tc.want
			if api == APIAnthropicMessages && (tc.details == "-1" || tc.details == "1001" || tc.details == "9223372036854775807") {
				// A read count that cannot be true makes Anthropic's prompt
				// sum impossible too: the whole usage is refused.
				want = ledger.Usage{Invalid: true, Known: false}
				if tc.details == "1001" { // 1000 + 1001: a believable sum, a believable read
					want = ledger.Usage{Known: true, Prompt: 2001, Completion: completion, CachedPrompt: ledger.KnownCount(1001)}
				}
			}
			t.Run(api+" "+tc.name, func(t *testing.T) {
				res, rec := probeSSE(t, c, api, stream(tc.details))
				if res.Outcome != ledger.OK {
					t.Fatalf("result %+v: want ok (a bad cache count is not a failed stream)", res)
				}
				if rec.Usage != want {
					t.Errorf("usage %+v, want %+v", rec.Usage, want)
				}
				n, _, ok := rec.CachedPromptTokens()
				if wantOK := want.CachedPrompt.Known; ok != wantOK || n != want.CachedPrompt.N {
					t.Errorf("CachedPromptTokens (%d, %v), want (%d, %v)", n, ok, want.CachedPrompt.N, wantOK)
				}
			})
		}
	}
}

// TestAnthropicCacheWrites: cache_creation_input_tokens is kept as the
// usage's cache writes, and a write that with the reads exceeds the prompt
// is refused.
func TestAnthropicCacheWrites(t *testing.T) {
	tests := []struct {
		usage string
		want  ledger.Usage
	}{
		{`{"input_tokens":5,"cache_creation_input_tokens":100,"cache_read_input_tokens":900}`,
			ledger.Usage{Known: true, Prompt: 1005, Completion: 1, CachedPrompt: ledger.KnownCount(900), CacheWrite: ledger.KnownCount(100)}},
		{`{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}`,
			ledger.Usage{Known: true, Prompt: 5, Completion: 1, CachedPrompt: ledger.KnownCount(0), CacheWrite: ledger.KnownCount(0)}},
		{`{"input_tokens":5,"cache_creation_input_tokens":-100,"cache_read_input_tokens":900}`, ledger.Usage{Invalid: true}},
		{`{"input_tokens":5,"cache_creation_input_tokens":null}`, ledger.Usage{Known: true, Prompt: 5, Completion: 1}},
	}
	for _, tt := range tests {
		d := AnthropicMessages{}.NewDecoder()
		events := []string{
			`{"type":"message_start","message":{"usage":` + tt.usage + `}}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`,
		}
		var got *ledger.Usage
		for _, e := range events {
			ev, err := d.Decode("", []byte(e))
			if err != nil {
				t.Fatalf("%s: %v", e, err)
			}
			if ev.Usage != nil {
				got = ev.Usage
			}
		}
		if got == nil || *got != tt.want {
			t.Errorf("usage %s: got %+v, want %+v", tt.usage, got, tt.want)
		}
	}
}

// TestChatScanCachedTokens: the chat scanner reads prompt_tokens_details as
// encoding/json does, in every shape.
func TestChatScanCachedTokens(t *testing.T) {
	for _, e := range []string{
		`{"choices":[],"usage":{"prompt_tokens":31,"completion_tokens":16,"total_tokens":47,"prompt_tokens_details":{"cached_tokens":30}}}`,
		`{"usage":{"prompt_tokens":31,"prompt_tokens_details":{"cached_tokens":0}}}`,
		`{"usage":{"prompt_tokens":31,"prompt_tokens_details":{"cached_tokens":null}}}`,
		`{"usage":{"prompt_tokens":31,"prompt_tokens_details":null}}`,
		`{"usage":{"prompt_tokens":31,"prompt_tokens_details":{}}}`,
		`{"usage":{"prompt_tokens":31,"prompt_tokens_details":{"audio_tokens":2,"cached_tokens":5}}}`,
		`{"usage":{"prompt_tokens":31,"prompt_tokens_details":{"cached_tokens":-4}}}`,
		`{"usage":{"prompt_tokens":31,"prompt_tokens_details":{"cached_tokens":32}}}`,
		`{"usage":{"prompt_tokens":31,"prompt_tokens_details":{"cached_tokens":1.5}}}`,
		`{"usage":{"prompt_tokens":31,"prompt_tokens_details":{"cached_tokens":"5"}}}`,
		`{"usage":{"prompt_tokens":31,"prompt_tokens_details":{"cached_tokens":99999999999999999999}}}`,
		`{"usage":{"prompt_tokens":31,"prompt_tokens_details":{"cached_tokens":1,"cached_tokens":2}}}`,
		`{"usage":{"prompt_tokens":31,"prompt_tokens_details":{"Cached_Tokens":3}}}`,
		`{"usage":{"prompt_tokens":31,"prompt_tokens_details":[1]}}`,
		`{"usage":{"prompt_tokens":31,"prompt_tokens_details":{"cached_tokens":4},"prompt_tokens_details":{"cached_tokens":5}}}`,
	} {
		decodeBoth(t, "", e)
	}
}

// TestLlamaCppCachedPrefixFixture: in the real llama.cpp stream of a
// request whose ~1,000-token prefix was cached, the record holds the cached
// count from the usage (1,015 of 1,036 prompt tokens) and the server's
// timings agree (cache_n 1,015, prompt_n 21), so CachedPromptTokens gives
// the same figure with or without the usage details.
func TestLlamaCppCachedPrefixFixture(t *testing.T) {
	f, err := replay.Load(filepath.Join(fixturesRoot, APIOpenAIChat), "llamacpp_cached_prefix")
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{
		"as sent":           f.Body,
		"without details":   bytes.Replace(f.Body, []byte(`,"prompt_tokens_details":{"cached_tokens":1015}`), nil, 1),
		"timings disagreed": bytes.Replace(bytes.Replace(f.Body, []byte(`,"prompt_tokens_details":{"cached_tokens":1015}`), nil, 1), []byte(`"cache_n":1015`), []byte(`"cache_n":1016`), 1),
	}
	if bytes.Equal(bodies["as sent"], bodies["without details"]) {
		t.Fatal("the fixture no longer holds cached_tokens 1015")
	}
	want := map[string]struct {
		n   int
		src string
		ok  bool
	}{
		"as sent":           {1015, ledger.CacheFromUsage, true},
		"without details":   {1015, ledger.CacheFromTimings, true},
		"timings disagreed": {0, "", false},
	}
	c, err := NewClient(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write(body)
			}))
			defer srv.Close()
			l := ledger.New(time.Now())
			rec := l.Plan(ledger.Meta{Target: "t"}, l.Now())
			res := c.Do(context.Background(), Target{Base: srv.URL, Adapter: OpenAIChat{}}, Params{}, rec, l.Now, func() { l.MarkDispatched(rec) })
			if res.Outcome != ledger.OK || rec.Usage.Prompt != 1036 {
				t.Fatalf("result %+v, usage %+v", res, rec.Usage)
			}
			if st := rec.ServerTimings; st == nil || (name != "timings disagreed" && st.CacheN+st.PromptN != 1036) {
				t.Fatalf("server timings %+v", st)
			}
			n, src, ok := rec.CachedPromptTokens()
			if w := want[name]; n != w.n || src != w.src || ok != w.ok {
				t.Errorf("CachedPromptTokens (%d, %q, %v), want %+v", n, src, ok, w)
			}
		})
	}
}
