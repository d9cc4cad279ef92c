package testutil

import "net/http"

// BasicAuth is a round tripper that adds a user and password to every
// request before Next (nil: http.DefaultTransport) sends it, as a client of
// an admin server behind basic auth does.
type BasicAuth struct {
	User, Password string
	Next           http.RoundTripper
}

// RoundTrip sends a copy of r with the credentials.
func (b BasicAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	next := b.Next
	if next == nil {
		next = http.DefaultTransport
	}
	r = r.Clone(r.Context())
	r.SetBasicAuth(b.User, b.Password)
	return next.RoundTrip(r)
}
