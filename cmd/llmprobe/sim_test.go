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
