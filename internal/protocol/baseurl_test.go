package protocol

import (
	"context"
	"strings"
	"testing"
)

func TestParseBaseURL(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		ok   bool
		want string // String()
	}{
		{"http://127.0.0.1:8000/v1", true, "http://127.0.0.1:8000/v1"},
		{"https://api.example.com/v1/", true, "https://api.example.com/v1"}, // trailing slash dropped
		{"http://h", true, "http://h"},
		{"ftp://h/v1", false, ""},
		{"/v1", false, ""},
		{"http://", false, ""},
		{"http://user:s3cret@%zz/v1", false, ""},
	} {
		b, err := ParseBaseURL(tc.raw)
		if (err == nil) != tc.ok {
			t.Errorf("ParseBaseURL(%q): err %v, want ok %v", tc.raw, err, tc.ok)
			continue
		}
		if err != nil {
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), tc.raw) {
				t.Errorf("ParseBaseURL(%q): the error quotes the URL: %v", tc.raw, err)
			}
			if !b.IsZero() {
				t.Errorf("ParseBaseURL(%q): a refused URL is not zero", tc.raw)
			}
			continue
		}
		if got := b.String(); got != tc.want {
			t.Errorf("ParseBaseURL(%q).String() = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

// Join gives what formatting the URL and parsing it again (as
// http.NewRequest does) gave before: an absolute path, no empty port, and
// a fresh URL each time (the base is never changed).
func TestBaseURLJoin(t *testing.T) {
	for _, tc := range []struct{ base, path, want, host string }{
		{"http://127.0.0.1:8000/v1", "chat/completions", "http://127.0.0.1:8000/v1/chat/completions", "127.0.0.1:8000"},
		{"http://h", "messages", "http://h/messages", "h"},
		{"http://h:/v1/", "/models", "http://h/v1/models", "h"},
		{"http://[::1]:9/a%2Fb", "responses", "http://[::1]:9/a%2Fb/responses", "[::1]:9"},
	} {
		b, err := ParseBaseURL(tc.base)
		if err != nil {
			t.Fatalf("%q: %v", tc.base, err)
		}
		u := b.Join(tc.path)
		if u.String() != tc.want || u.Host != tc.host || !strings.HasPrefix(u.Path, "/") {
			t.Errorf("Join(%q, %q) = %q (host %q, path %q), want %q (host %q)", tc.base, tc.path, u, u.Host, u.Path, tc.want, tc.host)
		}
		u.Path = "/changed"
		if again := b.Join(tc.path); again.String() != tc.want {
			t.Errorf("Join(%q, %q) after changing a result = %q: the base changed", tc.base, tc.path, again)
		}
	}
}

// Each adapter sends to the parsed base joined with its endpoint, the same
// as from the URL as text; a Target's URL wins over its Base.
func TestRequestToBaseURL(t *testing.T) {
	base, err := ParseBaseURL("http://127.0.0.1:8000/v1/")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []Adapter{OpenAIChat{}, OpenAICompletions{}, OpenAIResponses{}, AnthropicMessages{}} {
		p := Params{Model: "m", Prompt: "hi", MaxTokens: 4}
		parsed, err := a.Request(context.Background(), base, p)
		if err != nil {
			t.Fatalf("%s: Request: %v", a.Name(), err)
		}
		text, err := a.NewRequest(context.Background(), "http://127.0.0.1:8000/v1", p)
		if err != nil {
			t.Fatalf("%s: NewRequest: %v", a.Name(), err)
		}
		if parsed.URL.String() != text.URL.String() || parsed.Host != text.Host || parsed.Method != text.Method {
			t.Errorf("%s: Request sends to %s %q (Host %q), NewRequest to %s %q (Host %q)", a.Name(),
				parsed.Method, parsed.URL, parsed.Host, text.Method, text.URL, text.Host)
		}
		if !strings.HasPrefix(parsed.URL.Path, "/v1/") {
			t.Errorf("%s: path %q is not under the base's /v1", a.Name(), parsed.URL.Path)
		}
		if _, err := a.Request(context.Background(), BaseURL{}, p); err == nil {
			t.Errorf("%s: Request with no base URL built a request", a.Name())
		}
		if _, err := a.NewRequest(context.Background(), "http://user:s3cret@/v1", p); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: NewRequest with a bad base: err %v (want an error that does not quote it)", a.Name(), err)
		}
	}
	tg := Target{URL: base, Base: "http://other.invalid/v9"}
	if got, err := tg.BaseURL(); err != nil || got.String() != base.String() {
		t.Errorf("Target.BaseURL() = %q, %v; want the URL field %q", got, err, base)
	}
	tg = Target{Base: "http://127.0.0.1:8000/v1"}
	if got, err := tg.BaseURL(); err != nil || got.String() != "http://127.0.0.1:8000/v1" {
		t.Errorf("Target.BaseURL() from Base = %q, %v", got, err)
	}
}
