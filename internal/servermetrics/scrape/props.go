package scrape

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Bounds on llama.cpp's /props, read for its number of slots.
const (
	propsMaxBytes = 1 << 20 // its chat template is the bulk of it
	slotsMax      = 1 << 16
)

// propsURL is llama.cpp's /props beside a /metrics URL ("" when the
// metrics URL does not end in /metrics: no guess is made).
func propsURL(metrics string) string {
	u, err := url.Parse(metrics)
	if err != nil || !strings.HasSuffix(u.Path, "/metrics") {
		return ""
	}
	u.Path = strings.TrimSuffix(u.Path, "/metrics") + "/props"
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return u.String()
}

// slots reads llama.cpp's number of slots (total_slots in its /props,
// beside /metrics) with the scrape's client, bounds and timeout: llama.cpp
// exports busy slots (requests_processing) but not how many there are.
// The error says why it is unknown (cleaned by the caller).
func (s *Scraper) slots(ctx context.Context) (int, error) {
	u := propsURL(s.o.URL)
	if u == "" {
		return 0, errors.New("no /props beside a metrics URL not ending in /metrics")
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "llmprobe-servermetrics")
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, fmt.Errorf("GET /props: %s", causeOf(err, s.o.Timeout))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return 0, fmt.Errorf("GET /props: HTTP %d", resp.StatusCode)
	}
	var p struct {
		TotalSlots *float64 `json:"total_slots"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, propsMaxBytes)).Decode(&p); err != nil {
		return 0, fmt.Errorf("GET /props: not JSON of at most %d bytes: %w", propsMaxBytes, err)
	}
	n := p.TotalSlots
	if n == nil || *n < 1 || *n > slotsMax || *n != float64(int(*n)) {
		return 0, fmt.Errorf("GET /props: no total_slots from 1 to %d", slotsMax)
	}
	return int(*n), nil
}
