package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// requestTo builds a's request for base as text, parsed for this one
// request (Go callers that hold no BaseURL). The error never quotes base.
func requestTo(ctx context.Context, a Adapter, base string, p Params) (*http.Request, error) {
	b, err := ParseBaseURL(base)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.Name(), err)
	}
	return a.Request(ctx, b, p)
}

// postStream builds a streaming POST of body (JSON) to base joined with
// path; the URL is set as joined, never formatted and parsed again.
func postStream(ctx context.Context, api string, base BaseURL, path string, body any) (*http.Request, error) {
	if base.IsZero() {
		return nil, fmt.Errorf("%s: %w", api, errBaseURL)
	}
	buf, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding request body: %w", api, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "", bytes.NewReader(buf))
	if err != nil {
		return nil, fmt.Errorf("%s: building request: %w", api, err)
	}
	req.URL = base.Join(path)
	req.Host = req.URL.Host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return req, nil
}

// joinPrompt turns chat messages into one completion-style prompt.
func joinPrompt(p Params) string {
	if p.Prompt != "" || len(p.Messages) == 0 {
		return p.Prompt
	}
	parts := make([]string, 0, len(p.Messages))
	for _, m := range p.Messages {
		parts = append(parts, m.Content)
	}
	return strings.Join(parts, "\n\n")
}
