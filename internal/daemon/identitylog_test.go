package daemon

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/logging"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestIdentityChangeLogNamesBoth: the identity-change line names the
// previous identity and the new one (a deploy from build-1 to build-2),
// and the first sighting is no change.
func TestIdentityChangeLogNamesBoth(t *testing.T) {
	fake := newFakeTarget(t)
	var buf testutil.SyncBuffer
	log := logging.New(&buf, slog.LevelInfo, logging.FormatJSON)
	cfg := loadConfig(t, configYAML("1s", targetYAML("t1", fake.url, 5, "    identity: {models_field: root}\n")))
	r := startDaemon(t, cfg, func(o *Options) { o.Logger, o.IdentityEvery = log, 50*time.Millisecond })
	waitFor(t, 5*time.Second, "first identity", func() bool {
		_, ok := sum(r.metrics(t), "llmprobe_target_info", "target", "t1", "version", "build-1")
		return ok
	})
	fake.root.Store("build-2") // the deploy
	waitFor(t, 5*time.Second, "the change logged", func() bool { return strings.Contains(buf.String(), `"msg":"target identity changed"`) })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	lines := withMsg(logLines(t, buf.String()), "target identity changed")
	if len(lines) != 1 {
		t.Fatalf("%d identity lines, want 1:\n%s", len(lines), buf.String())
	}
	l := lines[0]
	if l["previous_model"] != "fake-model" || l["previous_version"] != "build-1" || l["model"] != "fake-model" || l["version"] != "build-2" {
		t.Errorf("identity line %v, want fake-model build-1 → fake-model build-2", l)
	}
}
