package durfmt

import "testing"

func TestCounts(t *testing.T) {
	for _, c := range []struct {
		m      map[string]int
		format string
		want   string
	}{
		{nil, "%s %d", ""},
		{map[string]int{"schema": 1, "mismatch": 3}, "%s %d", "mismatch 3, schema 1"},
		{map[string]int{"b": 2, "a": 2, "c": 5}, "%s ×%d", "c ×5, a ×2, b ×2"}, // ties by name
	} {
		if got := Counts(c.m, c.format); got != c.want {
			t.Errorf("Counts(%v, %q) = %q, want %q", c.m, c.format, got, c.want)
		}
	}
}
