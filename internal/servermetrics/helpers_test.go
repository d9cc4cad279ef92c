package servermetrics

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const textType = "text/plain; version=0.0.4; charset=utf-8"

var t0 = time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC)

// fixture reads a file of testdata.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// expo parses a text exposition stamped at t0 + at.
func expo(t testing.TB, text string, at time.Duration) *Exposition {
	t.Helper()
	e, err := Parse([]byte(text), textType)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, text)
	}
	e.At = t0.Add(at)
	return e
}

// window folds text expositions taken every step into a View.
func window(t testing.TB, f Flavour, metrics []string, step time.Duration, texts ...string) View {
	t.Helper()
	a := NewAccumulator(f, metrics)
	for i, s := range texts {
		a.Add(expo(t, s, time.Duration(i)*step))
	}
	v := a.View()
	v.Explanation = Explain(v)
	mustJSON(t, v)
	return v
}

// mustJSON checks a view encodes (no NaN or infinity) and decodes back.
func mustJSON(t testing.TB, v View) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("view does not encode: %v\n%+v", err, v)
	}
	var back View
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("view does not decode: %v", err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// get returns a role's stat or fails.
func get(t testing.TB, v View, r Role) *Stat {
	t.Helper()
	s := v.Get(r)
	if s == nil {
		t.Fatalf("no %s stat in %+v", r, v)
	}
	return s
}

// quantiles checks a histogram stat's count and p50/p95/p99.
func quantiles(t testing.TB, s *Stat, count, p50, p95, p99 float64) {
	t.Helper()
	h := s.Histogram
	if h == nil {
		t.Fatalf("%s: no histogram: %+v", s.Metric, s)
	}
	if !near(h.Count, count) {
		t.Errorf("%s: count %v, want %v", s.Metric, h.Count, count)
	}
	for _, q := range []struct {
		name string
		got  *Quantile
		want float64
	}{{"p50", h.P50, p50}, {"p95", h.P95, p95}, {"p99", h.P99, p99}} {
		if q.got == nil || !near(q.got.Value, q.want) || q.got.LowerBound {
			t.Errorf("%s %s = %+v, want %v", s.Metric, q.name, q.got, q.want)
		}
	}
}
