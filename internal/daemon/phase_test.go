package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/telemetry"
)

// TestReloadOutsideRun: a reload is refused, naming the phase, before Run
// and after shutdown; Run runs once.
func TestReloadOutsideRun(t *testing.T) {
	ft := newFakeTarget(t)
	cfg := loadConfig(t, configYAML("1s", targetYAML("t1", ft.url, 5, "")))

	rec, err := telemetry.New(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	idle, err := New(Options{Config: cfg, Recorder: rec, Load: configSource(cfg).load})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := idle.Reload(ctx, "test"); err == nil || !strings.Contains(err.Error(), "has not started") {
		t.Errorf("reload before Run: %v, want the daemon not started", err)
	}

	r := startDaemon(t, cfg, nil)
	if err := r.reloadTo(cfg); err != nil {
		t.Fatalf("reload while running: %v", err)
	}
	if err := r.d.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "Run called twice") {
		t.Errorf("second Run: %v, want Run called twice", err)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if err := r.reloadTo(cfg); err == nil || !strings.Contains(err.Error(), "not running (stopped)") {
		t.Errorf("reload after shutdown: %v, want the daemon not running (stopped)", err)
	}
}
