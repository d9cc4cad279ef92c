package durfmt

import (
	"math"
	"testing"
)

// TestRate: configured rates print as written (no exponent: the
// ladder report once printed a 1500 req/s capacity as 1.5e+03 and a
// 1234 req/s step as 1.23e+03), measured ones to about three significant
// digits.
func TestRate(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want string
	}{
		{0, "0"}, {4, "4"}, {12.5, "12.5"}, {0.25, "0.25"}, {1500, "1500"}, {1234, "1234"}, {8000, "8000"}, {0.125, "0.125"},
		{1234.5678, "1235"}, {1234.56, "1234.56"}, {14.2567, "14.3"}, {2.34567, "2.35"}, {0.0123456, "0.0123"}, {0.000123456, "0.000123"},
		{-2.34567, "-2.35"}, {math.Inf(1), "+Inf"},
	} {
		if got := Rate(tt.in); got != tt.want {
			t.Errorf("Rate(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
