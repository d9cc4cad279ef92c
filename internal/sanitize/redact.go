package sanitize

import (
	"net/url"
	"strings"
	"time"
	"unicode"
)

// URL returns s fit to print: the userinfo (user:password@) and the value
// of every query parameter whose name looks secret (SecretName) replaced by
// Marker, and a fragment replaced by Marker. A string that does not parse
// as a URL is handled by the same rule read lexically, erring towards
// redacting more: everything between "://" and the last "@" is userinfo.
// A string without "://" is returned as it is.
func URL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	if u, err := url.Parse(s); err == nil && u.Host != "" && u.Opaque == "" {
		var b strings.Builder
		b.WriteString(u.Scheme)
		b.WriteString("://")
		if u.User != nil {
			b.WriteString(Marker)
			b.WriteByte('@')
		}
		b.WriteString(u.Host)
		b.WriteString(u.EscapedPath())
		if u.RawQuery != "" || u.ForceQuery {
			b.WriteByte('?')
			b.WriteString(query(u.RawQuery))
		}
		if u.Fragment != "" || u.RawFragment != "" {
			b.WriteString("#" + Marker)
		}
		return b.String()
	}
	head, rest := s[:i+3], s[i+3:]
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		rest = Marker + rest[at:]
	}
	if q := strings.IndexAny(rest, "?#"); q >= 0 {
		tail := rest[q+1:]
		if h := strings.IndexByte(tail, '#'); h >= 0 {
			tail = tail[:h] + "#" + Marker
		}
		rest = rest[:q+1] + query(tail)
	}
	return head + rest
}

// query redacts the values of secret-looking parameters of a raw query,
// keeping everything else as it was written.
func query(raw string) string {
	parts := strings.FieldsFunc(raw, func(r rune) bool { return r == '&' || r == ';' })
	if len(parts) == 0 {
		return raw
	}
	changed := false
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if SecretName(name) {
			changed = true
			if hasValue {
				parts[i] = p[:strings.IndexByte(p, '=')+1] + Marker
			}
		}
	}
	if !changed {
		return raw
	}
	return strings.Join(parts, "&")
}

// SecretParam returns the name of the first query parameter of a raw
// query whose name looks secret (SecretName), or "".
func SecretParam(rawQuery string) string {
	for _, p := range strings.FieldsFunc(rawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		name, _, _ := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if SecretName(name) {
			return name
		}
	}
	return ""
}

// Words a secret-holding name is made of, exactly.
var secretWords = map[string]bool{
	"key": true, "apikey": true, "token": true, "secret": true, "password": true, "passwd": true, "pwd": true,
	"pass": true, "passphrase": true, "auth": true, "authorization": true, "bearer": true, "credential": true,
	"credentials": true, "cookie": true, "session": true, "sig": true, "signature": true, "jwt": true,
}

// Endings of words that name a secret fused with other words (xapikey,
// accesstoken, clientsecret, apikeys, oauth).
var secretSuffixes = []string{"key", "keys", "token", "secret", "password", "passwd", "cookie", "cookies", "credential", "credentials", "auth", "signature"}

// Parts of words that name a secret wherever they appear (authorization,
// authentication, authenticate).
var secretParts = []string{"passw", "secret", "credential", "bearer", "authoriz", "authent"}

// SecretName reports whether a name (a configuration key, a header or a
// query parameter name) says its value is a secret: one of its words (split
// at _ - . space and lower-to-upper case changes, lower-cased) is key,
// token, secret, password, auth, bearer, cookie, credential, session, sig,
// … or ends in key, keys, token, secret, … (apikey, apikeys, accesstoken),
// or contains passw, secret, credential, bearer, authoriz or authent. A
// name whose last word is env, file or path names where a secret is kept
// (api_key_env holds a variable name) and is not itself secret; a plural
// of token such as max_tokens counts something and is not secret either
// (keys, cookies and credentials are secrets in the plural too).
func SecretName(name string) bool {
	if locates(name) {
		return false
	}
	for _, w := range splitWords(name) {
		if secretWords[w] {
			return true
		}
		for _, s := range secretSuffixes {
			if strings.HasSuffix(w, s) {
				return true
			}
		}
		for _, p := range secretParts {
			if strings.Contains(w, p) {
				return true
			}
		}
	}
	return false
}

func splitWords(k string) []string {
	var words []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, strings.ToLower(cur.String()))
			cur.Reset()
		}
	}
	var prev rune
	for _, r := range k {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			flush()
			prev = r
			continue
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
		}
		cur.WriteRune(r)
		prev = r
	}
	flush()
	return words
}

// JSON returns a copy of a decoded JSON value (maps, slices, strings,
// numbers, booleans) with every secret string replaced by Marker and every
// other string passed through URL. A secret is what a secret-looking name
// (SecretName) holds as text: a non-empty string under such a member, and
// every string inside a mapping or list under one (credentials: {user,
// pass}); booleans, numbers and durations ("10m0s") are not secrets
// whatever their name (health_without_auth: true is shown). Inside a member
// that names where secrets are kept (a name ending in env, file or path,
// such as header_env: header name → variable name) values are names, and
// are shown.
func JSON(v any) any { return walk(v, false, false) }

// walk copies v; names: inside a member that locates secrets; secret:
// inside a member whose name looks secret.
func walk(v any, names, secret bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			loc := names || locates(k)
			out[k] = walk(val, loc, !loc && (secret || SecretName(k)))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = walk(val, names, secret)
		}
		return out
	case string:
		if secret && x != "" && !isDuration(x) {
			return Marker
		}
		return URL(x)
	}
	return v
}

// isDuration reports whether s is a Go duration with a unit ("10m0s"): how
// a duration is written, never how a credential is.
func isDuration(s string) bool {
	_, err := time.ParseDuration(s)
	return err == nil && strings.ContainsAny(s, "hmsuµn")
}

// locates reports whether a name says where a secret is kept (its last
// word is env, file or path) rather than holding one.
func locates(name string) bool {
	words := splitWords(name)
	if n := len(words); n > 1 {
		switch words[n-1] {
		case "env", "file", "path":
			return true
		}
	}
	return false
}
