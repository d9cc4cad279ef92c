package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// hostileKey is the API key the hostile target echoes back; tenantSecret
// is the value of a header_env header whose name (X-Tenant) does not look
// secret, echoed back too.
const (
	hostileKey   = "sk-live-HOSTILE-SENTINEL-0123456789abcdef"
	tenantSecret = "tenant-SENTINEL-7f3a9c2e51d0"
)

// hostileTarget answers chat requests with the request's Authorization and
// X-Tenant headers as the model name, and GET /v1/models with an identity
// header that is not valid UTF-8 (and echoes both, and changes at every poll)
// and a models field longer than 128 bytes with a multi-byte character
// across the bound.
func hostileTarget(t *testing.T) string {
	t.Helper()
	long := strings.Repeat("r", 127) + "é" + strings.Repeat("s", 40)
	var polls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			// A new build at every poll: every change is logged.
			w.Header()["X-Build"] = []string{fmt.Sprintf("caf\xe9 %d %s %s", polls.Add(1), r.Header.Get("Authorization"), r.Header.Get("X-Tenant"))}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"data": []map[string]any{{"id": "fake-model", "root": long}}})
		case "/v1/chat/completions":
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			model := strings.ReplaceAll(r.Header.Get("Authorization")+" "+r.Header.Get("X-Tenant"), `"`, "")
			fmt.Fprintf(w, "data: {\"model\":\"%s\",\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"%s\"}]}\n\n", model, model)
			fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":-3,\"completion_tokens\":9223372036854775807}}\n\ndata: [DONE]\n\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestHostileTargetNeverCrashesNorLeaks (issue 8, defects 1–4): against a
// target that reports negative and int64-max usage, an identity header that
// is not UTF-8, a models field over 128 bytes, and echoes the API key into
// the model, the finish reason and the identity header, the daemon stays up
// and ready; llmprobe_target_info carries clean label values; and the key
// (or its start) appears in none of /metrics, /debug/requests, /config,
// the status page, the logs or the ledger files — nor does the value of a
// header_env header, whatever its name (the daemon's Redactor knows it).
func TestHostileTargetNeverCrashesNorLeaks(t *testing.T) {
	t.Setenv("LLMPROBE_TEST_HOSTILE_KEY", hostileKey)
	t.Setenv("LLMPROBE_TEST_HOSTILE_TENANT", tenantSecret)
	url := hostileTarget(t)
	dir := t.TempDir()
	key := "    api_key_env: LLMPROBE_TEST_HOSTILE_KEY\n    header_env: {X-Tenant: LLMPROBE_TEST_HOSTILE_TENANT}\n"
	cfg := loadConfig(t, "ledger: {dir: "+dir+"}\n"+configYAML("1s",
		targetYAML("header", url, 20, key+"    identity: {response_header: x-build}\n"),
		targetYAML("field", url, 20, key+"    identity: {models_field: root}\n")))
	logs := &testutil.SyncBuffer{}
	r := startDaemon(t, cfg, func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	waitFor(t, 10*time.Second, "both identities, a change and some requests", func() bool {
		fams := r.metrics(t)
		_, h := sum(fams, "llmprobe_target_info", "target", "header")
		_, f := sum(fams, "llmprobe_target_info", "target", "field")
		n, _ := sum(fams, "llmprobe_requests_total", "outcome", "ok")
		c, _ := sum(fams, "llmprobe_target_identity_changes_total", "target", "header")
		return h && f && n >= 10 && c >= 1
	})
	fams := r.metrics(t)
	for _, s := range fams["llmprobe_target_info"].samples {
		for name, v := range s.labels {
			if !utf8.ValidString(v) || len(v) > 128 {
				t.Errorf("target_info %s=%q (%d bytes)", name, v, len(v))
			}
		}
		if !strings.Contains(s.labels["model"], sanitize.Marker) {
			t.Errorf("target_info model %q: want the echoed key shown as %s", s.labels["model"], sanitize.Marker)
		}
	}
	if v, ok := sum(fams, "llmprobe_target_info", "target", "header"); ok && v == 1 {
		for _, s := range fams["llmprobe_target_info"].samples {
			if s.labels["target"] == "header" && !strings.HasPrefix(s.labels["version"], "caf\uFFFD ") {
				t.Errorf("header version %q: want the invalid byte shown as U+FFFD", s.labels["version"])
			}
			if s.labels["target"] == "field" && s.labels["version"] != strings.Repeat("r", 127) {
				t.Errorf("field version %q: want it cut before the character across 128 bytes", s.labels["version"])
			}
		}
	}
	if v, _ := sum(fams, "llmprobe_tokens_total"); v != 0 {
		t.Errorf("tokens_total %v: impossible counts must not be counted", v)
	}

	pages := map[string]string{}
	for _, p := range []string{"/metrics", "/debug/requests", "/config", "/"} {
		resp, err := r.client.Get(r.admin + p)
		if err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		pages[p] = string(b)
	}
	if !strings.Contains(pages["/debug/requests"], `"invalid": true`) {
		t.Errorf("/debug/requests does not flag the impossible usage")
	}
	if err := r.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var ledgerText strings.Builder
	for _, f := range files {
		b, _ := os.ReadFile(f)
		ledgerText.Write(b)
	}
	if !strings.Contains(ledgerText.String(), sanitize.Marker) {
		t.Errorf("ledger files do not show the echoed key redacted")
	}
	pages["ledger files"] = ledgerText.String()
	pages["logs"] = logs.String()
	for where, text := range pages {
		if strings.Contains(text, hostileKey[:sanitize.MinFragment]) {
			t.Errorf("the API key (or its start) leaked into %s", where)
		}
		if strings.Contains(text, tenantSecret[:sanitize.MinFragment]) {
			t.Errorf("the header_env value (or its start) leaked into %s", where)
		}
	}
	if !strings.Contains(logs.String(), "target identity changed") {
		t.Errorf("no identity log line:\n%s", logs.String())
	}
}

// holdingServer answers every chat request with an event stream whose first
// event, about 700 KiB, never ends, and holds it until the client gives up.
func holdingServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: "+strings.Repeat("x", 700<<10))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestBufferBoundFromConfig (issue 8, defect 7): limits.max_buffered_bytes
// bounds the event bytes buffered by every target's client together: with
// a 1 MiB bound, a stream that would buffer a second unfinished ~700 KiB
// event while another holds one ends stream_error/buffer_limit (each alone
// is within the 1 MiB event maximum). A reload applies a new bound.
func TestBufferBoundFromConfig(t *testing.T) {
	url := holdingServer(t)
	// Streams held for seconds, not the helpers' 600 ms: on a loaded host
	// a stream may need most of a second to buffer its 700 KiB, and two
	// must hold theirs at once.
	target := strings.Replace(targetYAML("held", url, 5, ""), "timeouts: {connect: 1s, headers: 300ms, first_content: 600ms, idle: 400ms, total: 2s}",
		"timeouts: {connect: 2s, headers: 2s, first_content: 5s, idle: 5s, total: 6s}", 1)
	if !strings.Contains(target, "first_content: 5s") {
		t.Fatal("the target's timeouts were not replaced")
	}
	body := func(limit int) string {
		return fmt.Sprintf("limits: {max_buffered_bytes: %d}\n", limit) + configYAML("1s", target)
	}
	r := startDaemon(t, loadConfig(t, body(1<<20)), nil)
	waitFor(t, 30*time.Second, "a stream_error/buffer_limit record", func() bool { // generous: a busy machine
		n, _ := sum(r.metrics(t), "llmprobe_requests_total", "outcome", "stream_error", "reason", "buffer_limit")
		return n >= 1
	})
	r.mustReload(t, loadConfig(t, body(64<<20)))
	waitFor(t, 20*time.Second, "the reloaded bound", func() bool { return r.d.buffers.Limit() == 64<<20 })
	if err := r.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
}
