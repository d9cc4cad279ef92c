package sanitize

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

const key = "sk-test-SENTINEL-0123456789abcdef"

func TestString(t *testing.T) {
	r := NewRedactor(key)
	long := strings.Repeat("é", 100) // 200 bytes of 2-byte runes
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"plain", "gpt-4o-mini", 64, "gpt-4o-mini"},
		{"cut", "abcdefgh", 5, "abcde"},
		{"cut at a rune boundary", long, 7, strings.Repeat("é", 3)},
		{"invalid UTF-8", "caf\xe9", 64, "caf\uFFFD"},
		{"controls", "a\x1b[31mb\x07c\x00d\x7f", 64, "a\uFFFD[31mb\uFFFDc\uFFFDd\uFFFD"},
		{"newline and tab", "a\nb\tc", 64, "a\uFFFDb\uFFFDc"},
		{"C1 control and bidi override", "a\u0085b\u202ec", 64, "a\uFFFDb\uFFFDc"},
		{"printable unicode kept", "Llama-3 «ß» 模型", 64, "Llama-3 «ß» 模型"},
		{"the key", key, 64, Marker},
		{"the key inside", "model-" + key + "-x", 64, "model-" + Marker + "-x"},
		{"the Bearer form", "Bearer " + key, 64, Marker},
		{"the word Bearer alone is no secret", "Bearer scheme required", 64, "Bearer scheme required"},
		{"a cut-off Bearer form", "Bearer " + key[:10], 64, Marker},
		{"twice", key + "/" + key, 64, Marker + "/" + Marker},
		{"a cut-off start of the key", "x" + key[:12], 64, "x" + Marker},
		{"a start shorter than the fragment bound stays", "sk-test", 64, "sk-test"},
		{"the key after control characters", "\x00\x00" + key, 64, "\uFFFD\uFFFD" + Marker},
		{"the key beyond the bound", strings.Repeat("a", 60) + key, 64, strings.Repeat("a", 60) + Marker[:4]},
		{"default bound", strings.Repeat("a", 1000), 0, strings.Repeat("a", DefaultMax)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.String(tt.in, tt.max)
			if got != tt.want {
				t.Errorf("String(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			checkClean(t, got, tt.max)
		})
	}
}

func TestStringNilRedactor(t *testing.T) {
	var r *Redactor
	if got := r.String("a\x00"+key, 64); got != "a\uFFFD"+key {
		t.Errorf("nil redactor: %q", got)
	}
	if got := String("x\xff", 8); got != "x\uFFFD" {
		t.Errorf("String: %q", got)
	}
}

func TestRedactorWith(t *testing.T) {
	a := NewRedactor("first-secret-value")
	b := a.With("second-secret-value", "", "  ")
	if a.Len() != 1 || b.Len() != 2 {
		t.Fatalf("Len: a %d, b %d; want 1 and 2 (empty values ignored, a unchanged)", a.Len(), b.Len())
	}
	if got := a.String("second-secret-value", 64); got != "second-secret-value" {
		t.Errorf("With changed its receiver: %q", got)
	}
	if got := b.String("first-secret-value second-secret-value", 64); got != Marker+" "+Marker {
		t.Errorf("b: %q", got)
	}
	// A short secret is redacted only whole.
	short := NewRedactor("abc")
	if got := short.String("xabcx ab", 64); got != "x"+Marker+"x ab" {
		t.Errorf("short secret: %q", got)
	}
}

// TestRedactorCredentials: a secret given as an Authorization-style value
// ("<scheme> <credentials>") is redacted when a server echoes its
// credentials alone, wherever they appear and cut off, in any scheme case.
func TestRedactorCredentials(t *testing.T) {
	const tok = "sk-abcdefgh123456"
	tests := []struct {
		name   string
		secret string
		in     string
		want   string
	}{
		{"bare token after Bearer value", "Bearer " + tok, "invalid key " + tok, "invalid key " + Marker},
		{"bare token inside a word", "Bearer " + tok, "key=" + tok + ".", "key=" + Marker + "."},
		{"cut-off bare token", "Bearer " + tok, "got " + tok[:9], "got " + Marker},
		{"the value itself", "Bearer " + tok, "Bearer " + tok, Marker},
		{"lower-case scheme", "bearer " + tok, "invalid key " + tok, "invalid key " + Marker},
		{"echoed with the other case", "bearer " + tok, "Bearer " + tok, Marker},
		{"Basic", "Basic dXNlcjpwYXNzd29yZA==", "bad credentials dXNlcjpwYXNzd29yZA==", "bad credentials " + Marker},
		{"any scheme, extra white space", "Token \t " + tok + " ", "token " + tok, "token " + Marker},
		{"the scheme alone is no secret", "Bearer " + tok, "Bearer token required", "Bearer token required"},
		{"a value without a scheme is learnt whole only", "abc" + tok, "x " + tok, "x " + tok},
		{"a first word that is no scheme", "a=1; " + tok, "x " + tok, "x " + tok},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NewRedactor(tt.secret).String(tt.in, 64); got != tt.want {
				t.Errorf("NewRedactor(%q).String(%q) = %q, want %q", tt.secret, tt.in, got, tt.want)
			}
			if got := NewRedactor("other-secret-value").With(tt.secret).String(tt.in, 64); got != tt.want {
				t.Errorf("With(%q).String(%q) = %q, want %q", tt.secret, tt.in, got, tt.want)
			}
		})
	}
	if n := NewRedactor("Bearer " + tok).Len(); n != 1 {
		t.Errorf("Len = %d, want 1: the credentials learnt from a value are not a value given", n)
	}
}

// TestStringFastPath: a clean string costs no allocation.
func TestStringFastPath(t *testing.T) {
	r := NewRedactor(key)
	if n := testing.AllocsPerRun(100, func() { _ = r.String("invalid_request_error", 48) }); n != 0 {
		t.Errorf("clean string: %v allocations, want 0", n)
	}
}

// checkClean asserts the rule's guarantees on an output.
func checkClean(t *testing.T, s string, max int) {
	t.Helper()
	if max <= 0 {
		max = DefaultMax
	}
	if !utf8.ValidString(s) {
		t.Errorf("%q is not valid UTF-8", s)
	}
	if len(s) > max {
		t.Errorf("%q is %d bytes, over %d", s, len(s), max)
	}
	for _, c := range s {
		if c != utf8.RuneError && !unicode.IsPrint(c) {
			t.Errorf("%q holds non-printable %U", s, c)
		}
	}
	if strings.Contains(s, key[:MinFragment]) {
		t.Errorf("%q holds the start of the key", s)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "gpt-4o", "caf\xe9", "\x1b[2J", key, "Bearer " + key, "xx" + key[:10], strings.Repeat("\x00", 300) + key} {
		f.Add(s, 64)
	}
	r := NewRedactor(key)
	f.Fuzz(func(t *testing.T, s string, max int) {
		max = max%512 + 1
		if max <= 0 {
			max += 512
		}
		checkClean(t, r.String(s, max), max)
	})
}

func TestURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"},
		{"https://api.example.com/v1?api-version=2024-06-01", "https://api.example.com/v1?api-version=2024-06-01"},
		{"http://user:PW@host:8000/v1", "http://" + Marker + "@host:8000/v1"},
		{"http://host/v1?api-key=PW&x=1", "http://host/v1?api-key=" + Marker + "&x=1"},
		{"http://host/v1?x=1&access_token=PW", "http://host/v1?x=1&access_token=" + Marker},
		{"http://host/v1?sig=PW", "http://host/v1?sig=" + Marker},
		{"http://host/v1?api%2Dkey=PW", "http://host/v1?api%2Dkey=" + Marker},
		{"http://host/v1#access_token=PW", "http://host/v1#" + Marker},
		// Unparsable: read lexically.
		{"http://user:PW@[::1/v1", "http://" + Marker + "@[::1/v1"},
		{"http://user:P/W@host:x/v1", "http://" + Marker + "@host:x/v1"},
		{"http://user:P?W@host:x/v1", "http://" + Marker + "@host:x/v1"},
		{"http://[::1/v1?key=PW&b=2", "http://[::1/v1?key=" + Marker + "&b=2"},
		{"not a url", "not a url"},
		{"/etc/llmprobe/key", "/etc/llmprobe/key"},
	}
	for _, tt := range tests {
		got := URL(tt.in)
		if got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Contains(got, "PW") || strings.Contains(got, "P/W") {
			t.Errorf("URL(%q) = %q keeps the password", tt.in, got)
		}
	}
}

func TestSecretParam(t *testing.T) {
	for q, want := range map[string]string{"": "", "a=1&b=2": "", "a=1&api-key=x": "api-key", "api%2Dkey=x": "api-key", "x;token": "token"} {
		if got := SecretParam(q); got != want {
			t.Errorf("SecretParam(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestSecretName(t *testing.T) {
	secret := []string{"api_key", "apiKey", "API-KEY", "x-api-key", "X-Api-Key", "Authorization", "Proxy-Authorization",
		"Cookie", "X-Auth-Token", "access_token", "accesstoken", "xapikey", "client_secret", "password", "passwd",
		"sig", "Ocp-Apim-Subscription-Key", "x-goog-api-key", "bearer", "credentials", "session", "jwt",
		// Words the whole-word rule once missed: authentication in any
		// form, and plural keys.
		"Authentication", "X-Authentication", "authentication_token", "authenticate",
		"OAuth", "X-Api-Keys", "apikeys", "api_keys", "access_keys", "keys", "AccessKeys", "cookies", "Set-Cookie"}
	plain := []string{"max_tokens", "tokens_per_day", "api_key_env", "api_key_file", "key_file", "cert_file",
		"header_env", "headers", "response_header", "insecure_skip_verify", "model", "url", "name", "X-Request-Id",
		"OpenAI-Organization", "anthropic-version", "api-version", "models_field", "passage",
		"author", "authority", "X-Author", "max_output_tokens", "keyboard", "X-Keyed-By", "api_keys_env"}
	for _, n := range secret {
		if !SecretName(n) {
			t.Errorf("SecretName(%q) = false, want true", n)
		}
	}
	for _, n := range plain {
		if SecretName(n) {
			t.Errorf("SecretName(%q) = true, want false", n)
		}
	}
}

func TestJSON(t *testing.T) {
	in := map[string]any{
		"url":         "http://u:PW@h/v1?token=PW",
		"api_key_env": "OPENAI_API_KEY",
		"api_key":     "PW",
		"empty_token": "",
		"headers":     map[string]any{"X-Org": "acme", "X-Api-Key": "PW"},
		"header_env":  map[string]any{"X-Api-Key": "MY_KEY_VAR"},
		"list":        []any{"https://h/x?password=PW", 3.0, true, nil},
		"max_tokens":  64.0,
	}
	out := JSON(in).(map[string]any)
	want := map[string]any{
		"url":         "http://" + Marker + "@h/v1?token=" + Marker,
		"api_key_env": "OPENAI_API_KEY",
		"api_key":     Marker,
		"empty_token": "",
		"max_tokens":  64.0,
	}
	for k, v := range want {
		if out[k] != v {
			t.Errorf("%s = %v, want %v", k, out[k], v)
		}
	}
	h := out["headers"].(map[string]any)
	if h["X-Org"] != "acme" || h["X-Api-Key"] != Marker {
		t.Errorf("headers = %v", h)
	}
	if he := out["header_env"].(map[string]any); he["X-Api-Key"] != "MY_KEY_VAR" {
		t.Errorf("header_env = %v: variable names are shown", he)
	}
	if l := out["list"].([]any); l[0] != "https://h/x?password="+Marker || l[1] != 3.0 {
		t.Errorf("list = %v", l)
	}
	if in["api_key"] != "PW" {
		t.Error("JSON changed its input")
	}
}

// TestJSONRedactsByValue: a secret-looking name hides a string (a secret
// is text), never a boolean, a number or a duration; inside a secret-named
// mapping or list every string is hidden; a header named like a secret is
// hidden whatever its container.
func TestJSONRedactsByValue(t *testing.T) {
	in := map[string]any{
		"health_without_auth": true,
		"max_auth_retries":    3.0,
		"token_ttl":           "10m0s",
		"auth_token":          "s3cr3t",
		"headers":             map[string]any{"Authorization": "Bearer s3cr3t", "X-Org": "acme"},
		"credentials":         map[string]any{"user": "bob", "pass": "s3cr3t", "enabled": true, "key_file": "/run/k"},
		"api_keys":            []any{"s3cr3t", 2.0},
		"basic_auth":          nil,
	}
	out := JSON(in).(map[string]any)
	for k, want := range map[string]any{"health_without_auth": true, "max_auth_retries": 3.0, "token_ttl": "10m0s", "auth_token": Marker, "basic_auth": nil} {
		if out[k] != want {
			t.Errorf("%s = %v, want %v", k, out[k], want)
		}
	}
	if h := out["headers"].(map[string]any); h["Authorization"] != Marker || h["X-Org"] != "acme" {
		t.Errorf("headers = %v", h)
	}
	if c := out["credentials"].(map[string]any); c["user"] != Marker || c["pass"] != Marker || c["enabled"] != true || c["key_file"] != "/run/k" {
		t.Errorf("credentials = %v", c)
	}
	if l := out["api_keys"].([]any); l[0] != Marker || l[1] != 2.0 {
		t.Errorf("api_keys = %v", l)
	}
}
