package bench

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The benchmarks' knobs are environment variables (docs/benchmark.md):
// each helper returns def when name is unset and stops the benchmark,
// naming the variable, when its value is not what it must be.

// envFloats reads a comma-separated list of positive numbers (rates).
func envFloats(b *testing.B, name string, def []float64) []float64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []float64
	for _, f := range strings.Split(v, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || r <= 0 {
			b.Fatalf("%s: %q is not a positive rate", name, f)
		}
		out = append(out, r)
	}
	return out
}

// envInts reads a comma-separated list of positive integers.
func envInts(b *testing.B, name string, def []int) []int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("%s: %q is not a positive integer", name, f)
		}
		out = append(out, n)
	}
	return out
}

// envFloat reads one positive number.
func envFloat(b *testing.B, name string, def float64) float64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 {
		b.Fatalf("%s: %q is not a positive number", name, v)
	}
	return f
}

// envDuration reads one positive duration.
func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("%s: %q is not a positive duration", name, v)
	}
	return d
}
