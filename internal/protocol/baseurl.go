package protocol

import (
	"errors"
	"net/url"
	"strings"
)

// BaseURL is a target's base URL (e.g. "http://127.0.0.1:8000/v1"),
// parsed and checked once: wiring parses the configured url into one when
// it builds the Target, and every request joins its endpoint's path to it
// without parsing text again. The zero BaseURL is unset.
type BaseURL struct {
	u *url.URL // never modified after ParseBaseURL
}

// errBaseURL never echoes the URL: it may carry credentials.
var errBaseURL = errors.New("base URL must be an absolute http(s) URL")

// ParseBaseURL parses an absolute http(s) URL; trailing slashes of its
// path are dropped. The error never quotes raw.
func ParseBaseURL(raw string) (BaseURL, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return BaseURL{}, errBaseURL
	}
	return BaseURL{u: u}, nil
}

// IsZero reports whether b is unset.
func (b BaseURL) IsZero() bool { return b.u == nil }

// String is the URL as text ("" when unset). It may carry what the
// configuration wrote in the query: never log it unredacted.
func (b BaseURL) String() string {
	if b.u == nil {
		return ""
	}
	return b.u.String()
}

// Hostname and Port are the host without its port, and the port ("" when
// the URL names none).
func (b BaseURL) Hostname() string {
	if b.u == nil {
		return ""
	}
	return b.u.Hostname()
}

// Port: see Hostname.
func (b BaseURL) Port() string {
	if b.u == nil {
		return ""
	}
	return b.u.Port()
}

// Join is a new URL: the base with path joined to its path (path may
// carry no query). The path is absolute and an empty port is dropped, as
// http.NewRequest would leave them, so the result can be a request's URL
// as it is.
func (b BaseURL) Join(path string) *url.URL {
	u := b.u.JoinPath(path)
	if !strings.HasPrefix(u.Path, "/") { // a base with no path
		u.Path = "/" + u.Path
		if u.RawPath != "" {
			u.RawPath = "/" + u.RawPath
		}
	}
	if h := u.Host; strings.HasSuffix(h, ":") && len(h)-1 > strings.LastIndexByte(h, ']') {
		u.Host = h[:len(h)-1]
	}
	return u
}

// BaseURL is the URL t's requests go to: URL, or Base parsed when URL is
// unset (a Target a Go caller wrote by hand). The error never quotes it.
func (t Target) BaseURL() (BaseURL, error) {
	if !t.URL.IsZero() {
		return t.URL, nil
	}
	return ParseBaseURL(t.Base)
}
