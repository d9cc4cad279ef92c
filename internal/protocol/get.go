package protocol

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// Get performs a plain GET of the target's base URL joined with path with the client's transport,
// headers and auth (e.g. GET /models for the target's identity). Errors
// never carry the URL.
func (c *Client) Get(ctx context.Context, t Target, path string) (*http.Response, error) {
	base, err := t.BaseURL()
	if err != nil {
		return nil, fmt.Errorf("build GET %s request: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "", nil)
	if err != nil {
		return nil, fmt.Errorf("build GET %s request: %w", path, err)
	}
	req.URL = base.Join(path)
	req.Host = req.URL.Host
	c.setHeaders(req.Header, t)
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err
		}
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	return resp, nil
}
