package sanitize

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Marker replaces every redacted value.
const Marker = "[redacted]"

// DefaultMax is the length bound String applies when given none.
const DefaultMax = 256

// MinFragment is the shortest cut-off start of a secret that is still
// redacted: a server that echoes a truncated key (or a bound that cut one)
// gives away no more than MinFragment-1 of its bytes.
const MinFragment = 8

// Redactor cleans server-supplied strings and replaces the secret values it
// knows. The nil *Redactor knows no secrets and still cleans. A Redactor is
// immutable and safe for concurrent use.
type Redactor struct {
	secrets []secret // longest first, each with its "Bearer " form
	n       int      // values given that were new (Len)
}

// secret is one value to redact and the shortest cut-off start of it that
// is still redacted (for a "Bearer " form: the prefix plus MinFragment
// bytes of the key, so that the word Bearer alone is not a secret).
type secret struct {
	v    string
	frag int
}

// NewRedactor returns a Redactor that knows secrets (empty values are
// ignored; surrounding white space is trimmed).
func NewRedactor(secrets ...string) *Redactor {
	return (*Redactor)(nil).With(secrets...)
}

// With returns a Redactor that knows r's secrets and secrets too. r is not
// changed. Each value is learnt with its "Bearer " form; a value of the
// form "<scheme> <credentials>" (an Authorization header value such as
// "Bearer sk-…" or "Basic dXNlcjpwdw==", the scheme in any case) is learnt
// with its credentials alone too, since a server may echo the bare key.
func (r *Redactor) With(secrets ...string) *Redactor {
	out := &Redactor{}
	if r != nil {
		out.secrets = slices.Clone(r.secrets)
		out.n = r.n
	}
	const bearer = "Bearer "
	add := func(s string) bool {
		frag := min(len(s), MinFragment)
		added := false
		for _, x := range []secret{{s, frag}, {bearer + s, len(bearer) + frag}} {
			if !slices.Contains(out.secrets, x) {
				out.secrets = append(out.secrets, x)
				added = true
			}
		}
		return added
	}
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if add(s) {
			out.n++
		}
		if cred, ok := credentials(s); ok {
			add(cred)
		}
	}
	slices.SortStableFunc(out.secrets, func(a, b secret) int { return len(b.v) - len(a.v) })
	return out
}

// credentials returns the credentials of a value of the form
// "<scheme> <credentials>": a scheme of HTTP token characters, white space,
// then the rest (trimmed), which must not be empty.
func credentials(s string) (string, bool) {
	i := strings.IndexAny(s, " \t")
	if i <= 0 {
		return "", false
	}
	for j := 0; j < i; j++ {
		if !tchar(s[j]) {
			return "", false
		}
	}
	cred := strings.TrimSpace(s[i:])
	return cred, cred != ""
}

// tchar reports whether c may appear in an HTTP token (RFC 9110 5.6.2),
// such as an authentication scheme.
func tchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// Len reports how many of the values given to r (and to the Redactors it
// was made from) were new to it: empty values, repeats and values learnt
// already (as another's credentials) are not counted, nor are the forms
// learnt from each.
func (r *Redactor) Len() int {
	if r == nil {
		return 0
	}
	return r.n
}

// String is the one rule for a server-supplied string: valid UTF-8, every
// rune that is not printable (controls, format characters, invalid bytes)
// replaced by U+FFFD, known secrets (and cut-off starts of them of at
// least MinFragment bytes) replaced by Marker, then cut to at most max
// bytes at a rune boundary (max ≤ 0 means DefaultMax). A string that
// needs none of it is returned as it is, without allocating.
func (r *Redactor) String(s string, max int) string {
	if max <= 0 {
		max = DefaultMax
	}
	if len(s) <= max && plainASCII(s) && !r.mayHold(s) {
		return s
	}
	// Only a bounded prefix of a hostile string is looked at. Cleaning may
	// shrink text (a secret longer than Marker becomes Marker), so a start
	// of a secret the pre-cut leaves at the end of the input may end up
	// within max: one of MinFragment bytes or more is redacted like any
	// cut-off start, and a shorter one gives away no more than the
	// MinFragment-1 bytes a server echoing a cut-off key may.
	if in := 4*max + 64; len(s) > in {
		s = s[:in]
	}
	s = r.redact(printable(s))
	return cut(s, max)
}

// String cleans s with no known secrets: (*Redactor)(nil).String.
func String(s string, max int) string { return (*Redactor)(nil).String(s, max) }

// plainASCII reports whether s is printable ASCII only.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// mayHold reports whether s may hold a secret or a fragment of one.
func (r *Redactor) mayHold(s string) bool {
	if r == nil {
		return false
	}
	for _, k := range r.secrets {
		if strings.Contains(s, k.v[:k.frag]) {
			return true
		}
	}
	return false
}

// printable returns s as valid UTF-8 with every non-printable rune replaced
// by U+FFFD.
func printable(s string) string {
	ok := true
	for _, c := range s {
		if c == utf8.RuneError || !unicode.IsPrint(c) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, c := range s { // an invalid byte decodes as RuneError
		if c == utf8.RuneError || !unicode.IsPrint(c) {
			c = utf8.RuneError
		}
		b.WriteRune(c)
	}
	return b.String()
}

// redact replaces, left to right, the longest known secret (or cut-off start
// of one of at least MinFragment bytes) at each position by Marker.
func (r *Redactor) redact(s string) string {
	if !r.mayHold(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		best := 0
		for _, k := range r.secrets {
			if s[i] != k.v[0] {
				continue
			}
			if n := commonPrefix(s[i:], k.v); n >= k.frag && n > best {
				best = n
			}
		}
		if best > 0 {
			b.WriteString(Marker)
			i += best
			for i < len(s) && !utf8.RuneStart(s[i]) { // a fragment may end inside a rune
				i++
			}
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// cut returns s cut to at most max bytes without splitting a rune.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}
