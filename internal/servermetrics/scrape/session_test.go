package scrape

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type failingSource struct{}

func (failingSource) Start(context.Context) (*Window, error) {
	return nil, errors.New("connection refused")
}
func (failingSource) URL() string { return "http://127.0.0.1:1/metrics" }

// TestSession: no source is no view; a source that cannot open its window
// is a view saying why and where, never an error; Close is harmless.
func TestSession(t *testing.T) {
	ctx := context.Background()
	none := Open(ctx, nil)
	if v := none.End(ctx); v != nil {
		t.Errorf("no source: view %+v, want none", v)
	}
	none.Close()
	s := Open(ctx, failingSource{})
	s.Close()
	v := s.End(ctx)
	if v == nil || !v.Unavailable || !strings.Contains(v.Error, "connection refused") || !strings.Contains(v.URL, "127.0.0.1:1") {
		t.Errorf("failing source: %+v, want an unavailable view naming the endpoint and the error", v)
	}
}
