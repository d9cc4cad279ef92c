package urlprefix

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// URL is an absolute http(s) URL in normal form: lower-case scheme and
// host, an explicit port, a path without a trailing slash ("/" for none).
type URL struct {
	scheme, host, port, path string
}

// Parse reads raw into normal form, or says why it is refused. The error
// never echoes raw: a refused URL may carry a password.
func Parse(raw string) (URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return URL{}, errors.New("not a URL")
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return URL{}, errors.New("want an absolute http(s) URL")
	case u.Opaque != "" || u.Host == "":
		return URL{}, errors.New("want an absolute http(s) URL with a host")
	case u.User != nil:
		return URL{}, errors.New("credentials in the URL are not accepted")
	case u.RawQuery != "" || u.ForceQuery:
		return URL{}, errors.New("a query is not accepted")
	case u.Fragment != "" || u.RawFragment != "" || strings.Contains(raw, "#"):
		return URL{}, errors.New("a fragment is not accepted")
	}
	host, err := normalHost(u.Hostname())
	if err != nil {
		return URL{}, err
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return URL{}, errors.New("the port must be a number from 1 to 65535")
	}
	p, err := normalPath(u)
	if err != nil {
		return URL{}, err
	}
	return URL{scheme: scheme, host: host, port: port, path: p}, nil
}

// normalHost lower-cases a host name and writes an IP address in its
// canonical form; anything else (escapes, spaces, an IPv6 zone) is refused.
func normalHost(h string) (string, error) {
	if h == "" {
		return "", errors.New("want an absolute http(s) URL with a host")
	}
	if strings.Contains(h, ":") { // an IPv6 literal
		ip := net.ParseIP(h)
		if ip == nil {
			return "", errors.New("the host is not a valid IPv6 address")
		}
		return ip.String(), nil
	}
	h = strings.ToLower(h)
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return "", fmt.Errorf("the host has a character %q that a host name does not", c)
		}
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.String(), nil
	}
	return h, nil
}

// normalPath returns the decoded path without a trailing slash. Paths a
// server could read differently from the comparison are refused: escaped
// slashes or dots, dot segments, backslashes, control characters.
func normalPath(u *url.URL) (string, error) {
	if u.RawPath != "" && u.RawPath != u.EscapedPath() {
		return "", errors.New("escaped characters in the path are not accepted")
	}
	if lower := strings.ToLower(u.EscapedPath()); strings.Contains(lower, "%2f") || strings.Contains(lower, "%2e") || strings.Contains(lower, "%5c") {
		return "", errors.New("escaped slashes, dots or backslashes in the path are not accepted")
	}
	p := u.Path
	for _, c := range p {
		if c < 0x20 || c == 0x7f || c == '\\' {
			return "", errors.New("control characters and backslashes in the path are not accepted")
		}
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return "", errors.New("dot segments (. and ..) in the path are not accepted")
		}
	}
	p = strings.TrimRight(p, "/")
	if p == "" {
		p = "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	return p, nil
}

// String is the URL in normal form, the port left out when it is the
// scheme's default.
func (u URL) String() string {
	host := u.host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if !(u.scheme == "http" && u.port == "80" || u.scheme == "https" && u.port == "443") {
		host += ":" + u.port
	}
	path := u.path
	if path == "/" {
		path = ""
	}
	return (&url.URL{Scheme: u.scheme, Host: host, Path: path}).String()
}

// IsZero reports whether u is the zero URL (not parsed).
func (u URL) IsZero() bool { return u.scheme == "" }

// Under reports whether u falls under prefix: same scheme, host and port,
// and a path equal to the prefix's or continuing it at a segment boundary.
func (u URL) Under(prefix URL) bool {
	if u.IsZero() || prefix.IsZero() || u.scheme != prefix.scheme || u.host != prefix.host || u.port != prefix.port {
		return false
	}
	return prefix.path == "/" || u.path == prefix.path || strings.HasPrefix(u.path, prefix.path+"/")
}

// List is a list of allowed prefixes.
type List []URL

// ParseList parses every prefix; the error names the first bad one by its
// index.
func ParseList(raw []string) (List, error) {
	out := make(List, 0, len(raw))
	for i, r := range raw {
		u, err := Parse(r)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// Match returns the first prefix u falls under.
func (l List) Match(u URL) (URL, bool) {
	for _, p := range l {
		if u.Under(p) {
			return p, true
		}
	}
	return URL{}, false
}
