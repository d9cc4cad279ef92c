package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSimSubcommand: `llmprobe sim` serves the models it is told to,
// requires the key named by --api-key-env, answers a probe, and stops when
// its context ends.
func TestSimSubcommand(t *testing.T) {
	t.Parallel()
	const key = "sim-cmd-key-5c6d7e8f"
	addr := closedPort(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done, exited := make(chan result, 1), make(chan struct{})
	t.Cleanup(func() { cancel(); <-exited })
	go func() {
		defer close(exited)
		done <- invokeEnv(ctx, context.Background(), map[string]string{"SIM_KEY": key},
			"sim", "--listen", addr, "--model", "served-model", "--api-key-env", "SIM_KEY",
			"--ttft", "10ms", "--token-time", "2ms", "--output-tokens", "8", "--deploy-version", "build-7")
	}()

	client := &http.Client{Timeout: 2 * time.Second}
	defer client.CloseIdleConnections()
	models := func(withKey bool) (int, []string) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/models", nil)
		if withKey {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		var body struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		var ids []string
		for _, d := range body.Data {
			ids = append(ids, d.ID)
		}
		return resp.StatusCode, ids
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, ids := models(true)
		if code == http.StatusOK {
			if len(ids) != 1 || ids[0] != "served-model" {
				t.Errorf("/v1/models lists %q, want [served-model]", ids)
			}
			break
		}
		select {
		case r := <-done:
			t.Fatalf("sim exited with %d: %s", r.code, r.stderr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("sim did not serve /v1/models within 10s")
		}
	}

	// The deploy identity, then a live deploy through /admin/state.
	ver := func() string {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/models", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("X-Model-Version")
	}
	if v := ver(); v != "build-7" {
		t.Errorf("X-Model-Version %q, want build-7", v)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/admin/state", strings.NewReader(`{"version":"build-8","slots":2}`))
	req.Header.Set("Authorization", "Bearer "+key)
	if resp, err := client.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /admin/state: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if v := ver(); v != "build-8" {
		t.Errorf("after the deploy: X-Model-Version %q, want build-8", v)
	}

	keyFile := tempPath(t, "key")
	if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	r := completes(t, "probe", "--url", "http://"+addr+"/v1", "--model", "served-model", "--api-key-file", keyFile,
		"--rate", "10", "--duration", "1s", "--json")
	p := decodeProbe(t, r)
	if p.Planned == 0 || p.Outcomes["ok"] != p.Planned {
		t.Errorf("probe of llmprobe sim: %d planned, outcomes %v", p.Planned, p.Outcomes)
	}

	cancel()
	select {
	case r := <-done:
		if r.code != 0 {
			t.Errorf("sim exit code %d: %s", r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "capacity") || strings.Contains(r.stderr, key) {
			t.Errorf("sim banner: %q (want the capacity, never the key)", r.stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("sim did not stop within 15s of cancellation")
	}
}

// TestSimPrefixCacheFlags: the prefix-cache flags reach the simulator's
// live state (GET /admin/state), the banner says what the cache is, and a
// bad setting is a usage error naming its key.
func TestSimPrefixCacheFlags(t *testing.T) {
	t.Parallel()
	for _, bad := range [][]string{
		{"--prefix-cache-block-tokens", "0"},
		{"--prefix-cache-blocks", "-1"},
		{"--prefill-per-token", "-1ms"},
	} {
		r := mustExit(t, []int{exitUsage}, append([]string{"sim", "--listen", closedPort(t)}, bad...)...)
		if !strings.Contains(r.stderr, "prefix_cache") && !strings.Contains(r.stderr, "prefill_per_token") {
			t.Errorf("sim %v: %q, want the key named", bad, r.stderr)
		}
	}
	addr := closedPort(t)
	ctx, cancel := context.WithCancel(t.Context())
	done, exited := make(chan result, 1), make(chan struct{})
	t.Cleanup(func() { cancel(); <-exited })
	go func() {
		defer close(exited)
		done <- invoke(ctx, "sim", "--listen", addr, "--prefill-per-token", "2ms", "--prefix-cache=false", "--prefix-cache-blocks", "300")
	}()
	client := &http.Client{Timeout: 2 * time.Second}
	defer client.CloseIdleConnections()
	var st struct {
		PrefixCache     bool    `json:"prefix_cache"`
		Blocks          int     `json:"prefix_cache_blocks"`
		PrefillPerToken float64 `json:"prefill_per_token_seconds"`
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := client.Get("http://" + addr + "/admin/state")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("GET /admin/state: %v", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sim did not serve /admin/state within 10s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st.PrefixCache || st.Blocks != 300 || st.PrefillPerToken != 0.002 {
		t.Errorf("state %+v, want the cache off, 300 blocks, 2 ms per token", st)
	}
	cancel()
	select {
	case r := <-done:
		if r.code != 0 || !strings.Contains(r.stderr, "prefill + 2ms per uncached prompt token; prefix cache off") {
			t.Errorf("sim exit %d, banner %q", r.code, r.stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("sim did not stop within 15s of cancellation")
	}
}
