package testutil

import (
	"strings"
	"testing"
	"time"
)

// TestRun: a command's output and exit code come back as they were; one
// that outlives its bound, or cannot start, fails the test saying so.
func TestRun(t *testing.T) {
	stdout, stderr, code := Run(t, time.Minute, Env("X=y"), "sh", "-c", `echo "out $X $TZ"; echo err >&2; exit 3`)
	if string(stdout) != "out y UTC\n" || string(stderr) != "err\n" || code != 3 {
		t.Errorf("got stdout %q, stderr %q, code %d; want \"out y UTC\\n\", \"err\\n\", 3", stdout, stderr, code)
	}
	tests := []struct{ name, want string }{
		{"sleep", "did not end within 200ms"},
		{"/nonexistent/llmprobe", "no such file"},
	}
	for _, tt := range tests {
		msg := failed(t, func(tb testing.TB) { Run(tb, 200*time.Millisecond, nil, tt.name, "30") })
		if !strings.Contains(msg, tt.want) {
			t.Errorf("%s: failure %q, want it to say %q", tt.name, msg, tt.want)
		}
	}
}
