package scrape

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/servermetrics"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC)

// fixture reads a file of the servermetrics package's testdata (the
// captured expositions are the view's and the scraper's both).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustJSON checks a view encodes (no NaN or infinity) and decodes back.
func mustJSON(t testing.TB, v servermetrics.View) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("view does not encode: %v\n%+v", err, v)
	}
	var back servermetrics.View
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("view does not decode: %v", err)
	}
}

// get returns a role's stat or fails.
func get(t testing.TB, v servermetrics.View, r servermetrics.Role) *servermetrics.Stat {
	t.Helper()
	s := v.Get(r)
	if s == nil {
		t.Fatalf("no %s stat in %+v", r, v)
	}
	return s
}
