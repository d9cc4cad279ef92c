package urlprefix

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		raw, want, err string
	}{
		{raw: "http://a.example", want: "http://a.example"},
		{raw: "HTTP://A.Example:80/v1/", want: "http://a.example/v1"},
		{raw: "https://a.example:443/v1//", want: "https://a.example/v1"},
		{raw: "http://a.example:8000/v1", want: "http://a.example:8000/v1"},
		{raw: "http://127.0.0.1:8000/v1", want: "http://127.0.0.1:8000/v1"},
		{raw: "http://[::1]:8000/v1", want: "http://[::1]:8000/v1"},
		{raw: "http://[0:0::1]/", want: "http://[::1]"},
		{raw: "http://a.example/a%20b", want: "http://a.example/a%20b"},
		{raw: "ftp://a.example", err: "http(s)"},
		{raw: "a.example/v1", err: "http(s)"},
		{raw: "http:a.example", err: "host"},
		{raw: "http:///v1", err: "host"},
		{raw: "http://user:pw@a.example", err: "credentials"},
		{raw: "http://user@a.example", err: "credentials"},
		{raw: "http://a.example/v1?key=x", err: "query"},
		{raw: "http://a.example/v1?", err: "query"},
		{raw: "http://a.example/v1#x", err: "fragment"},
		{raw: "http://a.example/v1/../admin", err: "dot segments"},
		{raw: "http://a.example/v1/./x", err: "dot segments"},
		{raw: "http://a.example/v1%2F..%2Fadmin", err: "escaped"},
		{raw: "http://a.example/v1/%2e%2e/admin", err: "escaped"},
		{raw: "http://a.example/v1\\admin", err: "path"},
		{raw: "http://a.example:0/", err: "port"},
		{raw: "http://a.example:99999/", err: "port"},
		{raw: "http://a.example:080/", err: "port"},
		{raw: "http://a ex/", err: "not a URL"},
		{raw: "http://[fe80::1%25eth0]/", err: "IPv6"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			u, err := Parse(tt.raw)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parse(%q) = %v, %v; want an error containing %q", tt.raw, u, err, tt.err)
				}
				if strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "a.example") {
					t.Errorf("error %q echoes the URL", err)
				}
				return
			}
			if err != nil || u.String() != tt.want {
				t.Fatalf("Parse(%q) = %q, %v; want %q", tt.raw, u.String(), err, tt.want)
			}
		})
	}
}

// TestUnder: the prefix is compared on the parsed URL, the path at a
// segment boundary; tricky look-alikes are refused.
func TestUnder(t *testing.T) {
	tests := []struct {
		prefix, target string
		want           bool
	}{
		{"http://a.example", "http://a.example/v1/chat", true},
		{"http://a.example/", "http://a.example", true},
		{"http://a.example/v1", "http://a.example/v1", true},
		{"http://a.example/v1", "http://a.example/v1/", true},
		{"http://a.example/v1", "http://a.example/v1/models", true},
		{"http://a.example/v1", "http://A.EXAMPLE:80/v1", true},
		{"http://a.example:80/v1", "http://a.example/v1", true},
		{"http://a.example/v1/", "http://a.example/v1", true},
		{"http://a.example", "http://a.example.evil", false},
		{"http://a.example", "http://a.example.evil/v1", false},
		{"http://a.example", "http://evil.a.example", false},
		{"http://a.example", "http://evila.example", false},
		{"http://a.example/v1", "http://a.example/v10", false},
		{"http://a.example/v1", "http://a.example/v1x/y", false},
		{"http://a.example/v1", "http://a.example/", false},
		{"http://a.example/v1", "http://a.example//v1", false},
		{"http://a.example/v1", "https://a.example/v1", false},
		{"https://a.example/v1", "http://a.example/v1", false},
		{"http://a.example/v1", "http://a.example:8080/v1", false},
		{"http://a.example:8080", "http://a.example/v1", false},
		{"http://127.0.0.1:8000", "http://127.0.0.1:8001/v1", false},
		{"http://127.0.0.1:8000", "http://localhost:8000/v1", false},
		{"http://[::1]:8000", "http://[0::1]:8000/v1", true},
	}
	for _, tt := range tests {
		p, err := Parse(tt.prefix)
		if err != nil {
			t.Fatalf("prefix %q: %v", tt.prefix, err)
		}
		u, err := Parse(tt.target)
		if err != nil {
			t.Fatalf("target %q: %v", tt.target, err)
		}
		if got := u.Under(p); got != tt.want {
			t.Errorf("%q under %q = %v, want %v", tt.target, tt.prefix, got, tt.want)
		}
	}
	// Look-alikes that do not even parse are never under anything.
	for _, raw := range []string{"http://a.example@evil.example/v1", "http://a.example/v1/../../admin", "http://a.example/v1%2f..%2fadmin"} {
		if u, err := Parse(raw); err == nil {
			t.Errorf("%q parsed as %q", raw, u)
		}
	}
	if (URL{}).Under(URL{}) {
		t.Error("the zero URL is under itself")
	}
}

func TestList(t *testing.T) {
	l, err := ParseList([]string{"http://a.example/v1", "https://b.example"})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := Parse("https://b.example/x/v1")
	if p, ok := l.Match(u); !ok || p.String() != "https://b.example" {
		t.Errorf("match %q %v", p, ok)
	}
	u, _ = Parse("http://c.example/v1")
	if _, ok := l.Match(u); ok {
		t.Error("matched a host not listed")
	}
	if _, err := ParseList([]string{"http://a.example", "http://x:pw@b.example"}); err == nil || !strings.HasPrefix(err.Error(), "[1]: credentials") {
		t.Errorf("bad entry: %v", err)
	}
	if _, ok := List(nil).Match(u); ok {
		t.Error("an empty list matched")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"http://a.example/v1", "http://[::1]:80/", "http://a@b/", "http://a.example/v1/../x"} {
		f.Add(s)
	}
	prefix, _ := Parse("http://a.example/v1")
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := Parse(raw)
		if err != nil {
			return
		}
		// The normal form is stable and parses to itself.
		v, err := Parse(u.String())
		if err != nil || v != u {
			t.Fatalf("%q → %q → %v, %v", raw, u.String(), v, err)
		}
		if u.Under(prefix) && !strings.HasPrefix(u.String(), "http://a.example/v1") {
			t.Fatalf("%q under the prefix but written %q", raw, u.String())
		}
	})
}
