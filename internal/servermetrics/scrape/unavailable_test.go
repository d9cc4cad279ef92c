package scrape

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/servermetrics"
)

// TestUnavailable: a window that could not be opened is a view that says
// so and why (the scrape's failure cause kept), with the URL, no figures,
// and still encodes as JSON.
func TestUnavailable(t *testing.T) {
	srv := &series{}
	srv.fail.Store(1)
	u := serve(t, srv.ServeHTTP)
	s := newScraper(t, Options{URL: u + "?token=" + secret})
	_, err := s.Start(context.Background())
	if err == nil {
		t.Fatal("start against a failing server succeeded")
	}
	v := servermetrics.Unavailable(s.URL(), err)
	if !v.Unavailable || len(v.Stats) != 0 || v.Scrapes != 0 {
		t.Errorf("view %+v", v)
	}
	if strings.Contains(v.URL, secret) || strings.Contains(v.Error, secret) || strings.Contains(v.Explanation, secret) {
		t.Errorf("a secret query parameter reached the view: %+v", v)
	}
	if !strings.HasPrefix(v.Explanation, "server metrics unavailable: scrape ") || !strings.Contains(v.Explanation, "HTTP 500") {
		t.Errorf("explanation %q", v.Explanation)
	}
	if v.FailureCause != "HTTP 500" {
		t.Errorf("failure cause %q, want the scrape's own %q", v.FailureCause, "HTTP 500")
	}
	if _, err := json.Marshal(v); err != nil {
		t.Errorf("view does not encode: %v", err)
	}
}
