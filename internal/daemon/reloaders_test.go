package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/telemetry"
)

// lockedBuffer is a log destination safe for the daemon's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

// TestOneReloadPath: every reload, by Reload or by POST /-/reload, loads
// through Options.Load, swaps the targets, then applies the reloaders in
// order, is logged once with its trigger and exported; a configuration
// that does not load, or whose targets cannot be built, reaches no
// reloader and is logged refused once.
func TestOneReloadPath(t *testing.T) {
	fake := newFakeTarget(t)
	good := func(rate float64) *config.Config {
		c := loadConfig(t, configYAML("1s", targetYAML("t1", fake.url, rate, "")))
		c.Admin.EnableLifecycle = true
		return c
	}
	var (
		mu      sync.Mutex
		applied []string // "name rate" per reloader call
		loadErr error
	)
	note := func(name string) Reloader {
		return Reloader{Name: name, Apply: func(c *config.Config) error {
			mu.Lock()
			defer mu.Unlock()
			applied = append(applied, fmt.Sprintf("%s %g", name, c.Targets[0].Baseline.Rate))
			return nil
		}}
	}
	logs := &lockedBuffer{}
	var metric *telemetry.ConfigReload
	var src testSource
	r := startDaemon(t, good(5), func(o *Options) {
		src = configSource(o.Config)
		o.Load = func() (*config.Config, error) {
			mu.Lock()
			err := loadErr
			mu.Unlock()
			if err != nil {
				return nil, err
			}
			return src.load()
		}
		o.Reloaders = []Reloader{note("first"), note("second")}
		o.Logger = slog.New(slog.NewJSONHandler(logs, nil))
		var err error
		if metric, err = telemetry.NewConfigReload(o.Recorder.Registry(), ""); err != nil {
			t.Fatal(err)
		}
		o.ReloadMetric = metric
	})
	r.source = src.cfg

	r.mustReload(t, good(7))
	src.cfg.Store(good(9))
	resp, err := r.client.Post(r.admin+"/-/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /-/reload: %d", resp.StatusCode)
	}
	mu.Lock()
	got := strings.Join(applied, ", ")
	mu.Unlock()
	if want := "first 7, second 7, first 9, second 9"; got != want {
		t.Errorf("reloaders applied %q, want %q (in order, once per reload)", got, want)
	}
	if n := logs.count(`"msg":"configuration reloaded","trigger":"test"`); n != 1 {
		t.Errorf("%d lines of the reload by Reload, want 1:\n%s", n, logs.buf.String())
	}
	if n := logs.count(`"msg":"configuration reloaded","trigger":"POST /-/reload"`); n != 1 {
		t.Errorf("%d lines of the reload by POST /-/reload, want 1", n)
	}
	if v, _ := sum(r.metrics(t), "llmprobe_config_last_reload_successful"); v != 1 {
		t.Errorf("llmprobe_config_last_reload_successful = %g after good reloads, want 1", v)
	}

	// Refused: a configuration that does not load, and one whose target
	// cannot be built (its key variable unset). No reloader hears of them.
	mu.Lock()
	loadErr = errors.New("cannot parse")
	mu.Unlock()
	if err := r.d.Reload(t.Context(), "test"); err == nil {
		t.Error("a configuration that does not load was accepted")
	}
	mu.Lock()
	loadErr = nil
	mu.Unlock()
	bad := loadConfig(t, configYAML("1s", targetYAML("t1", fake.url, 11, "    api_key_env: LLMPROBE_TEST_SURELY_UNSET_KEY\n")))
	if err := r.reloadTo(bad); err == nil {
		t.Error("a configuration whose target cannot be built was accepted")
	}
	mu.Lock()
	if n := len(applied); n != 4 {
		t.Errorf("reloaders applied %d times, want still 4: %v", n, applied)
	}
	mu.Unlock()
	if n := logs.count(`"msg":"reload refused`); n != 2 {
		t.Errorf("%d refusals logged, want 2:\n%s", n, logs.buf.String())
	}
	if v, _ := sum(r.metrics(t), "llmprobe_config_last_reload_successful"); v != 0 {
		t.Errorf("llmprobe_config_last_reload_successful = %g after a refused reload, want 0", v)
	}
}
