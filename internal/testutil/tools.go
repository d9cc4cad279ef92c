package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Promtool finds promtool: $PROMTOOL, then PATH, then the cache location
// .ci/run installs it to (~/.cache/llmprobe/bin). Without it the test
// skips, loudly, saying what it would have checked (why).
func Promtool(t testing.TB, why string) string {
	t.Helper()
	return tool(t, "promtool", "PROMTOOL", why)
}

// Prometheus finds the Prometheus 3.x server as Promtool finds promtool:
// $LLMPROBE_PROMETHEUS, then PATH, then ~/.cache/llmprobe/bin.
func Prometheus(t testing.TB, why string) string {
	t.Helper()
	return tool(t, "prometheus", "LLMPROBE_PROMETHEUS", why)
}

// tool finds the program name: $env (which must then exist), then PATH,
// then ~/.cache/llmprobe/bin, where .ci/run installs Prometheus and
// promtool; without it the test skips, saying why it was needed.
func tool(t testing.TB, name, env, why string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", env, p, err)
		}
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if dir, err := os.UserCacheDir(); err == nil {
		p := filepath.Join(dir, "llmprobe", "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("%s not installed: set %s or put %s on PATH (.ci/run installs it into ~/.cache/llmprobe/bin) to %s", name, env, name, why)
	return ""
}
