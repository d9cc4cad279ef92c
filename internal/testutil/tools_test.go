package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTool: the variable wins (and must name a file), then PATH, then
// ~/.cache/llmprobe/bin; with none the test skips naming the variable.
func TestTool(t *testing.T) {
	exe := func(dir, name string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	onPath := t.TempDir()
	cache := t.TempDir()
	fromEnv := exe(t.TempDir(), "prometheus")
	fromPath := exe(onPath, "prometheus")
	fromCache := exe(filepath.Join(cache, "llmprobe", "bin"), "prometheus")
	tests := []struct {
		name, env, path, cache string
		want, skip, fatal      string
	}{
		{name: "variable", env: fromEnv, path: onPath, cache: cache, want: fromEnv},
		{name: "variable naming nothing", env: fromEnv + ".gone", path: onPath, fatal: "LLMPROBE_PROMETHEUS=" + fromEnv + ".gone"},
		{name: "PATH", path: onPath, cache: cache, want: fromPath},
		{name: "cache", path: t.TempDir(), cache: cache, want: fromCache},
		{name: "none", path: t.TempDir(), cache: t.TempDir(), skip: "prometheus not installed: set LLMPROBE_PROMETHEUS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LLMPROBE_PROMETHEUS", tt.env)
			t.Setenv("PATH", tt.path)
			t.Setenv("XDG_CACHE_HOME", tt.cache)
			got, skip, fatal := stopped(t, func(tb testing.TB) string { return Prometheus(tb, "test") })
			if got != tt.want || !strings.Contains(skip, tt.skip) || (skip == "") != (tt.skip == "") ||
				!strings.Contains(fatal, tt.fatal) || (fatal == "") != (tt.fatal == "") {
				t.Errorf("got %q, skip %q, fatal %q; want %q, skip %q, fatal %q", got, skip, fatal, tt.want, tt.skip, tt.fatal)
			}
		})
	}
}
