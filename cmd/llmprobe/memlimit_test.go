package main

import (
	"bytes"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// TestSetMemoryLimit: a container limit sets Go's soft limit to 90 % of
// it and says so; GOMEMLIMIT in the environment wins; no limit leaves Go's
// limit alone. Not parallel: Go's memory limit is process-wide.
func TestSetMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	const gib = 1 << 30
	for _, tc := range []struct {
		name     string
		env      string // GOMEMLIMIT, "" = unset
		provider memlimit.Provider
		want     int64
		log      string
	}{
		{"container limit", "", memlimit.Limit(gib), gib * 9 / 10, "Go memory limit set"},
		{"GOMEMLIMIT wins", "300MiB", memlimit.Limit(gib), 300 << 20, "Go memory limit from GOMEMLIMIT"},
		{"no limit", "", func() (uint64, error) { return 0, memlimit.ErrNoLimit }, math.MaxInt64, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetMemoryLimit(math.MaxInt64)
			t.Setenv("AUTOMEMLIMIT", "")
			os.Unsetenv("AUTOMEMLIMIT") // set only to be restored: automemlimit reads an empty value as a ratio
			t.Setenv("GOMEMLIMIT", tc.env)
			if tc.env != "" {
				debug.SetMemoryLimit(300 << 20) // as the runtime reads GOMEMLIMIT at start
			}
			var buf bytes.Buffer
			setMemoryLimit(slog.New(slog.NewTextHandler(&buf, nil)), tc.provider)
			if got := debug.SetMemoryLimit(-1); got != tc.want {
				t.Errorf("Go's memory limit %d, want %d", got, tc.want)
			}
			if tc.log != "" && !strings.Contains(buf.String(), tc.log) {
				t.Errorf("log %q does not say %q", buf.String(), tc.log)
			}
			if tc.log == "" && buf.Len() != 0 {
				t.Errorf("logged at info: %q", buf.String())
			}
		})
	}
}
