package protocol

import "net/http"

// PlainHTTP returns an HTTP client over the Client's transport (its TLS
// settings, proxy and connection pool) that adds nothing to a request: no
// API key, no configured header. It follows no redirect. It is for reading
// a target's other endpoints, such as its own Prometheus /metrics, which
// must not receive the target's credentials.
func (c *Client) PlainHTTP() *http.Client {
	return &http.Client{
		Transport:     c.rt,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
