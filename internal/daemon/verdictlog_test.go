package daemon

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestVerdictFlipsLoggedOnce: the live verdict's flips are logged once
// each, with their cause, however often the verdict is judged (scrapes,
// the status page, the tick): a warning when it turns invalid, and, after
// a clean window (not before: hysteresis), an info line naming it.
func TestVerdictFlipsLoggedOnce(t *testing.T) {
	var buf bytes.Buffer
	d := &Daemon{log: slog.New(slog.NewTextHandler(&buf, nil))}
	r := &targetRun{name: "t1", state: newTargetState()}
	v := r.state.validity
	t0 := time.Unix(8_000_000, 0)
	for i := range 100 {
		v.Observe(t0.Add(time.Duration(i)*10*time.Millisecond), 20*time.Millisecond)
	}
	lines := func() []string { return strings.Split(strings.TrimSpace(buf.String()), "\n") }
	for _, at := range []time.Duration{time.Second, 2 * time.Second, 30 * time.Second, 59 * time.Second} {
		if got := v.Judge(t0.Add(at), verdict.HostHealth{}); got.Valid {
			t.Fatalf("%v after 100 late dispatches: valid", at)
		}
		d.logVerdict(r)
	}
	if l := lines(); len(l) != 1 || !strings.Contains(l[0], "level=WARN") || !strings.Contains(l[0], "cause=dispatch_lag") ||
		!strings.Contains(l[0], "100 of 100 dispatches later than 10ms") || !strings.Contains(l[0], "what_to_do=") {
		t.Fatalf("after the flip to invalid, judged 4 times: log %q, want one warning with the cause", l)
	}
	// Fewer than 1 % late in the window, a minute later: clean, valid again.
	for i := range 200 {
		v.Observe(t0.Add(61*time.Second+time.Duration(i)*time.Millisecond), time.Millisecond)
	}
	for range 3 {
		if got := v.Judge(t0.Add(62*time.Second), verdict.HostHealth{}); !got.Valid {
			t.Fatalf("a clean window: %v", got.Reasons())
		}
		d.logVerdict(r)
	}
	l := lines()
	if len(l) != 2 || !strings.Contains(l[1], "level=INFO") || !strings.Contains(l[1], "generator valid again") ||
		!strings.Contains(l[1], "a clean 60s window: 0 of 200 dispatches later than 10ms") {
		t.Fatalf("after the flip to valid: log %q, want one more line naming the clean window", l)
	}
}
