package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// postStream builds a streaming POST of body (JSON) to base joined with path.
func postStream(ctx context.Context, api, base, path string, body any) (*http.Request, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The base URL is not echoed: it may carry credentials.
		return nil, fmt.Errorf("%s: base URL must be an absolute http(s) URL", api)
	}
	u = u.JoinPath(path)
	buf, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding request body: %w", api, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(buf))
	if err != nil {
		return nil, fmt.Errorf("%s: building request: %w", api, err)
	}
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
