package protocol

import (
	"net/http"
)

// gateway reports whether a response is a gateway's own answer for the
// server behind it: a 502 (Bad Gateway: the proxy could not reach or read
// its upstream) or 504 (Gateway Timeout: the upstream did not answer in
// the proxy's time) whose body is not the API's error object (se nil; an
// inference server that says 502 itself sends its JSON error). The note
// names the gateway by its Server header, cleaned, when it sent one.
func (c *Client) gateway(resp *http.Response, se *ServerError) (string, bool) {
	if se != nil || (resp.StatusCode != http.StatusBadGateway && resp.StatusCode != http.StatusGatewayTimeout) {
		return "", false
	}
	by := "a gateway"
	if srv := c.red.String(resp.Header.Get("Server"), maxLabel); srv != "" {
		by += " (Server: " + srv + ")"
	}
	if resp.StatusCode == http.StatusGatewayTimeout {
		return " from " + by + ": its upstream did not answer in time", true
	}
	return " from " + by + ": it could not reach or read its upstream", true
}
