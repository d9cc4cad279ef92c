package protocol

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// decodeBoth decodes the events with the scanner-first decoder and with the
// encoding/json reference and fails on any difference in events or errors.
func decodeBoth(t *testing.T, name string, events ...string) {
	t.Helper()
	fast, ref := &chatDecoder{}, &chatDecoder{slowOnly: true}
	for i, data := range events {
		fe, ferr := fast.Decode(name, []byte(data))
		re, rerr := ref.Decode(name, []byte(data))
		fr, _ := ReasonOf(ferr)
		rr, _ := ReasonOf(rerr)
		if (ferr == nil) != (rerr == nil) || fr != rr {
			t.Fatalf("event %d %q: scanner error %v, encoding/json error %v", i, data, ferr, rerr)
		}
		if !sameEvent(fe, re) {
			t.Fatalf("event %d %q: scanner %+v (usage %+v err %+v), encoding/json %+v (usage %+v err %+v)",
				i, data, fe, fe.Usage, fe.Err, re, re.Usage, re.Err)
		}
	}
}

func TestChatScanMatchesEncodingJSON(t *testing.T) {
	tests := []struct {
		name   string
		events []string
	}{
		{"typical stream", []string{
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":" the"},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":1}}}`,
			`[DONE]`}},
		{"upper-case keys fold like encoding/json", []string{`{"Choices":[{"DELTA":{"Content":"x"},"Finish_Reason":"stop"}],"USAGE":{"Prompt_Tokens":3}}`}},
		{"upper-case unknown keys", []string{`{"ID":"x","choices":[{"Index":0,"delta":{"Role":"assistant","content":"y"}}]}`}},
		{"escaped key", []string{`{"choices":[{"delta":{"\u0063ontent":"x"}}]}`}},
		{"kelvin sign folds to k", []string{`{"usage":{"prompt_to\u212aens":4,"prompt_toKens":5}}`, "{\"usage\":{\"prompt_to\xe2\x84\xaaens\":4}}"}},
		{"duplicate keys", []string{`{"choices":[{"delta":{"content":"x"}}],"choices":[{"delta":{}}]}`, `{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`, `{"model":"a","model":"b"}`}},
		{"escapes in values", []string{`{"model":"m\u00e9","choices":[{"delta":{"content":"\n"},"finish_reason":"st\u006fp"}]}`}},
		{"invalid utf-8 in values", []string{"{\"model\":\"m\xff\",\"choices\":[{\"delta\":{\"content\":\"\xfe\"},\"finish_reason\":\"\xff\"}]}"}},
		{"null everywhere", []string{`{"model":null,"choices":null,"usage":null,"error":null}`, `{"choices":[null,{"delta":null,"finish_reason":null}],"usage":{"prompt_tokens":null,"completion_tokens_details":null}}`}},
		{"non-string content", []string{`{"choices":[{"delta":{"content":1,"reasoning":{"a":[1,2]},"reasoning_content":["x"]}}]}`}},
		{"type mismatches", []string{`{"choices":{}}`, `{"choices":[1]}`, `{"choices":[{"delta":"x"}]}`, `{"choices":[{"finish_reason":1}]}`, `{"usage":[]}`, `{"usage":{"prompt_tokens":"1"}}`, `{"usage":{"completion_tokens_details":1}}`}},
		{"numbers", []string{`{"usage":{"prompt_tokens":1e2}}`, `{"usage":{"prompt_tokens":1.0}}`, `{"usage":{"prompt_tokens":-0}}`, `{"usage":{"prompt_tokens":99999999999999999999}}`, `{"usage":{"prompt_tokens":-7,"completion_tokens":9223372036854775807}}`, `{"x":-1.5e-3}`, `{"x":01}`, `{"x":1.}`, `{"x":-}`, `{"x":.5}`}},
		{"invalid JSON", []string{`{"choices":[`, `{"a":1,}`, `{"a" 1}`, `{"a":1}x`, `{"a":tru}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", `{"a":"\u12"}`, `{,}`, `{"a":[1,]}`, `{"a":1 "b":2}`, `{"a":nul}`, `{'a':1}`}},
		{"errors", []string{`{"error":{"type":"t","code":"c"},"choices":[{"delta":{"content":"x"}}]}`, `{"error":"x"}`, `{"error":[1]}`, `{"error":{"code":7}}`}},
		{"deep nesting", []string{`{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `,"choices":[{"delta":{"content":"x"}}]}`}},
		{"model only once", []string{`{"model":"a"}`, `{"model":"b"}`, `{"model":""}`}},
		{"white space", []string{"{ \"choices\" :\t[ {\r\n\"delta\" : { \"content\" : \"x\" } } ] }"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, name := range []string{"", "error"} {
				decodeBoth(t, name, tt.events...)
				for _, e := range tt.events {
					decodeBoth(t, name, e) // each alone, on a fresh decoder
				}
			}
		})
	}
}

// The scanner must answer for the chunks real servers send (else the fast
// path silently stops being used) and must never accept invalid JSON.
func TestChatScanReadsTypicalChunks(t *testing.T) {
	for _, data := range []string{
		`{"id":"chatcmpl-8f3a","object":"chat.completion.chunk","created":1700000000,"model":"meta-llama/Llama-3.1-8B-Instruct","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"hm"},"finish_reason":"length","stop_reason":null}],"usage":{"prompt_tokens":5,"total_tokens":7,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":1}}}`,
		`{"error":{"message":"m","type":"t","code":1}}`,
	} {
		var f chatFields
		sc := chatScan{b: []byte(data)}
		if !sc.chunk(&f, true) {
			t.Errorf("scanner gave up on %s", data)
		}
	}
	for _, data := range []string{`{"a":1}}`, `{"a":[}`, `{"a":"x}`, `{"a":1e}`, `{"a":-01}`} {
		var f chatFields
		sc := chatScan{b: []byte(data)}
		if sc.chunk(&f, true) {
			t.Errorf("scanner accepted invalid %s", data)
		}
	}
}

func TestChatDecodeContentChunkAllocs(t *testing.T) {
	chunk := []byte(`{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":" the"},"finish_reason":null}]}`)
	d := &chatDecoder{model: true}
	if n := testing.AllocsPerRun(100, func() {
		if ev, err := d.Decode("", chunk); err != nil || !ev.Content {
			t.Fatal(ev, err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per content chunk, want 0", n)
	}
}

// FuzzChatScan checks the scanner against encoding/json on arbitrary input:
// same events, same errors, and nothing accepted that is not valid JSON.
//
//	go test -fuzz=FuzzChatScan -fuzztime=5m ./internal/protocol/
func FuzzChatScan(f *testing.F) {
	for _, s := range []string{
		`{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":" the"},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"reasoning":"r"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":0}}}`,
		`{"error":{"type":"t","code":1}}`, `{"Choices":[{"Delta":{"CONTENT":"x"}}]}`, `{"usage":{"prompt_tokens":1e2}}`,
		`{"model":"m\u00e9","choices":[null]}`, `[DONE]`,
		`{"choices":[],"usage":{"prompt_tokens":31,"completion_tokens":16,"prompt_tokens_details":{"cached_tokens":30}}}`,
		`{"usage":{"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":null,"audio_tokens":1}}}`,
	} {
		f.Add("", []byte(s))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		var fl chatFields
		sc := chatScan{b: data}
		if sc.chunk(&fl, true) && !json.Valid(data) {
			t.Fatalf("scanner accepted invalid JSON %q", data)
		}
		decodeBoth(t, name, string(data), string(data))
	})
}

func BenchmarkChatDecodeReference(b *testing.B) {
	chunk := []byte(`{"id":"chatcmpl-8f3a","object":"chat.completion.chunk","created":1700000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}`)
	d := &chatDecoder{slowOnly: true}
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		if ev, err := d.Decode("", chunk); err != nil || !ev.Content {
			b.Fatal(ev, err)
		}
	}
}

// chatRequest is the chat request body as a struct: the reference that
// appendChatRequest writes by hand.
type chatRequest struct {
	Model         string              `json:"model,omitempty"`
	Messages      []Message           `json:"messages"`
	MaxTokens     int                 `json:"max_tokens,omitempty"`
	Stream        bool                `json:"stream"`
	StreamOptions openAIStreamOptions `json:"stream_options"`
}

// The hand-written request body must be byte for byte what json.Marshal
// makes of the request struct.
func checkChatBody(t *testing.T, model string, msgs []Message, maxTokens int, deltas bool) {
	t.Helper()
	want, err := json.Marshal(chatRequest{Model: model, Messages: msgs, MaxTokens: maxTokens, Stream: true,
		StreamOptions: openAIStreamOptions{IncludeUsage: true, ContinuousUsageStats: deltas}})
	if err != nil {
		t.Fatal(err)
	}
	if got := appendChatRequest(nil, model, msgs, maxTokens, deltas); string(got) != string(want) {
		t.Fatalf("body\n%s\nwant\n%s", got, want)
	}
}

func TestChatRequestBodyMatchesMarshal(t *testing.T) {
	for _, tt := range []struct {
		model  string
		msgs   []Message
		max    int
		deltas bool
	}{
		{"m", []Message{{"user", "hi"}}, 16, false},
		{"", []Message{{"system", "s"}, {"user", "u"}}, 0, true},
		{"", nil, -3, false},
		{"q\"\\/<>&", []Message{{"user", "tab\tnl\ncr\rbs\bff\f\x00\x1f\x7f é \u2028\u2029 \xff\xfe😀"}}, 1 << 40, true},
	} {
		checkChatBody(t, tt.model, tt.msgs, tt.max, tt.deltas)
	}
}

func FuzzChatRequestBody(f *testing.F) {
	f.Add("m", "user", "hello <world> & \"you\"\n", 8, true)
	f.Fuzz(func(t *testing.T, model, role, content string, max int, deltas bool) {
		checkChatBody(t, model, []Message{{role, content}, {content, role}}, max, deltas)
	})
}

// The request URL is built without a format-and-parse round trip: it must
// be what parsing the joined URL gives.
func TestChatRequestURL(t *testing.T) {
	for _, base := range []string{"http://127.0.0.1:8000", "http://127.0.0.1:8000/", "http://127.0.0.1:8000/v1", "https://h:/a/b/",
		"http://[::1]:80/v1", "http://u:p@h/x%2Fy/v1", "http://h/v1?q=1"} {
		req, err := OpenAIChat{}.NewRequest(t.Context(), base, Params{})
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(base)
		want, err := http.NewRequest("POST", u.JoinPath("chat/completions").String(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if req.URL.String() != want.URL.String() || req.URL.RequestURI() != want.URL.RequestURI() || req.Host != want.Host {
			t.Errorf("%s: url %s (%s) host %s, want %s (%s) host %s", base, req.URL, req.URL.RequestURI(), req.Host, want.URL, want.URL.RequestURI(), want.Host)
		}
	}
}
