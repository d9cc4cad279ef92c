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
	if p := os.Getenv("PROMTOOL"); p != "" {
		return p
	}
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	if dir, err := os.UserCacheDir(); err == nil {
		p := filepath.Join(dir, "llmprobe", "bin", "promtool")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("promtool not installed: set PROMTOOL or put promtool on PATH to %s", why)
	return ""
}
