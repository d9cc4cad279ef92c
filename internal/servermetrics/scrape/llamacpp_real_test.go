package scrape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/servermetrics"
)

// llamaDir is llama.cpp's staged server: $LLMPROBE_LLAMACPP_DIR, else
// ../shared/engines/llama.cpp beside the repository's root (where CI puts
// shared/); "" when its llama-server is absent.
func llamaDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("LLMPROBE_LLAMACPP_DIR")
	if dir == "" {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
			t.Fatalf("repository root not at %s: %v", root, err)
		}
		dir = filepath.Join(root, "..", "shared", "engines", "llama.cpp")
	}
	if _, err := os.Stat(filepath.Join(dir, "llama-server")); err != nil {
		return ""
	}
	return dir
}

// startLlama starts llama-server with start.sh on a free loopback port in
// 18000-19999 and stops it (SIGTERM, by its PID) when the test ends.
func startLlama(t *testing.T, dir string) string {
	t.Helper()
	for range 5 {
		port := 18000 + rand.IntN(2000)
		ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
		out, err := exec.CommandContext(ctx, filepath.Join(dir, "start.sh"), strconv.Itoa(port)).Output()
		cancel()
		var ee *exec.ExitError
		if errors.As(err, &ee) && strings.Contains(string(ee.Stderr), "already listens") {
			continue
		}
		if err != nil {
			t.Fatalf("start.sh %d: %v\n%s", port, err, stderrOf(err))
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatalf("start.sh printed %q, not a PID", out)
		}
		t.Cleanup(func() { stopPID(t, pid) })
		return fmt.Sprintf("http://127.0.0.1:%d", port)
	}
	t.Fatal("no free port for llama-server after 5 tries")
	return ""
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// stopPID sends SIGTERM to the server it started and waits (up to 10 s)
// for it to exit.
func stopPID(t *testing.T, pid int) {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
	}
	t.Logf("llama-server %d still running 10 s after SIGTERM", pid)
}

// complete asks for n tokens exactly (ignore_eos) and returns the
// completion tokens the server reported.
func complete(ctx context.Context, c *http.Client, base string, n int) (int, error) {
	body, _ := json.Marshal(map[string]any{"model": "tiny", "prompt": fmt.Sprintf("count to %d", n), "max_tokens": n, "ignore_eos": true})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/completions", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, err
	}
	return r.Usage.CompletionTokens, nil
}

// TestLlamaCPPRealServer: against llama.cpp's own server, started with
// start.sh: the flavour is detected, the number of slots read, and the
// generated tokens over the window equal the completion tokens of the
// requests sent in it; nothing is read as a reset.
func TestLlamaCPPRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts llama.cpp's server: not with -short")
	}
	dir := llamaDir(t)
	if dir == "" {
		t.Skip("llama.cpp's llama-server is absent (../shared/engines/llama.cpp beside the repository, or $LLMPROBE_LLAMACPP_DIR): skipped")
	}
	base := startLlama(t, dir)
	s := newScraper(t, Options{URL: base + "/metrics", Interval: 200 * time.Millisecond, Timeout: 5 * time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	w, err := s.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	var (
		mu   sync.Mutex
		sent int
		errs []error
		wg   sync.WaitGroup
	)
	for i := range 6 { // more than its 4 slots: some wait, deferred
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := complete(ctx, c, base, 200+10*i)
			mu.Lock()
			defer mu.Unlock()
			sent += n
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	v, err := w.End(ctx)
	if err != nil || len(errs) > 0 {
		t.Fatalf("end: %v; requests: %v", err, errs)
	}
	if v.Flavour != servermetrics.LlamaCPP || v.Slots != 4 {
		t.Errorf("flavour %q with %d slots, want llamacpp with 4 (start.sh: --parallel 4)", v.Flavour, v.Slots)
	}
	gen := get(t, v, servermetrics.GenTokens).Counter
	if sent != 6*200+10*15 || gen.Increase != float64(sent) || gen.Resets != 0 {
		t.Errorf("server generated %+v over the window; the requests got %d completion tokens", gen, sent)
	}
	if p := get(t, v, servermetrics.PromptTokens).Counter; p.Increase <= 0 {
		t.Errorf("prompt tokens %+v", p)
	}
	for _, r := range []servermetrics.Role{servermetrics.Running, servermetrics.Waiting, servermetrics.TokensMax, servermetrics.SlotsPerDec} {
		if s := get(t, v, r); s.Kind != servermetrics.Gauge {
			t.Errorf("%s read as %s", s.Metric, s.Kind)
		}
	}
	if strings.Contains(v.Explanation, "reset") || !strings.Contains(v.Explanation, "tokens generated") {
		t.Errorf("explanation %q", v.Explanation)
	}
	t.Logf("llama.cpp server view: %s", v.Explanation)
}
