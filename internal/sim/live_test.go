package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestVersionIdentity: Config.Version (sim --deploy-version) is the X-Model-Version header of every
// response and the root field of the /v1/models entries; an Update changes
// both at once.
func TestVersionIdentity(t *testing.T) {
	cfg := testConfig()
	cfg.Version = "build-1"
	s, base := startServer(t, cfg)
	c := testClient(t)
	models := func() (hdr, root string) {
		resp, err := c.Get(base + "/models")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var list struct {
			Data []struct {
				ID   string `json:"id"`
				Root string `json:"root"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Data) != 1 {
			t.Fatalf("models: %v %+v", err, list)
		}
		return resp.Header.Get(VersionHeader), list.Data[0].Root
	}
	if h, r := models(); h != "build-1" || r != "build-1" {
		t.Fatalf("models: header %q root %q, want build-1", h, r)
	}
	resp := post(t, c, base+"/chat/completions", chatBody(true), nil)
	drain(t, resp)
	if v := resp.Header.Get(VersionHeader); v != "build-1" {
		t.Fatalf("chat: %s %q, want build-1", VersionHeader, v)
	}
	v2 := "build-2"
	if st, err := s.Update(Update{Version: &v2}); err != nil || st.Version != v2 {
		t.Fatalf("update: %+v %v", st, err)
	}
	if h, r := models(); h != v2 || r != v2 {
		t.Fatalf("after the deploy: header %q root %q, want %s", h, r, v2)
	}
	// Without a version, neither appears (as before).
	_, base2 := startServer(t, testConfig())
	resp2, err := c.Get(base2 + "/models")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if resp2.Header.Get(VersionHeader) != "" || strings.Contains(string(b), `"root"`) {
		t.Fatalf("no version configured, yet header %q / body %s", resp2.Header.Get(VersionHeader), b)
	}
}

// TestUpdateSlots: halving the slots while requests are queued lets only
// the new number run at once (requests in service are not cut short);
// raising them starts queued requests at once.
func TestUpdateSlots(t *testing.T) {
	cfg := testConfig()
	cfg.Slots = 2
	cfg.TTFT = FixedDist(0.3)
	cfg.OutputTokens = FixedDist(1)
	s, base := startServer(t, cfg)
	c := testClient(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { drain(t, post(t, c, base+"/chat/completions", chatBody(true), nil)) })
	}
	waitStats(t, s, func(st Stats) bool { return st.InService == 2 && st.Queued == 2 })
	one := 1
	if st, err := s.Update(Update{Slots: &one}); err != nil || st.Slots != 1 || st.Capacity >= cfg.Capacity() {
		t.Fatalf("update: %+v %v (capacity was %g)", st, err, cfg.Capacity())
	}
	// The two in service finish; only one queued request takes their place.
	waitStats(t, s, func(st Stats) bool { return st.Completed == 2 })
	time.Sleep(50 * time.Millisecond)
	if st := s.Stats(); st.InService != 1 || st.Queued != 1 {
		t.Fatalf("after halving: %+v, want 1 in service and 1 queued", st)
	}
	three := 3
	if _, err := s.Update(Update{Slots: &three}); err != nil {
		t.Fatal(err)
	}
	waitStats(t, s, func(st Stats) bool { return st.InService == 2 && st.Queued == 0 })
	wg.Wait()
	if st := s.Stats(); st.Completed != 4 {
		t.Fatalf("stats %+v, want 4 completed", st)
	}
}

func waitStats(t *testing.T, s *Server, ok func(Stats) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(s.Stats()) {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v never reached the expected state", s.Stats())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestErrorFraction: a broken deploy answers that fraction of admitted
// generation requests 500 in the API's error shape, reproducibly.
func TestErrorFraction(t *testing.T) {
	cfg := testConfig()
	cfg.ErrorFraction = 0.5
	s, base := startServer(t, cfg)
	c := testClient(t)
	failed := 0
	const n = 40
	for range n {
		resp := post(t, c, base+"/chat/completions", chatBody(true), nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusInternalServerError {
			failed++
			if !strings.Contains(string(b), `"type":"api_error"`) || !strings.Contains(string(b), `"code":"internal_error"`) {
				t.Fatalf("500 body %s: want an OpenAI-shaped error", b)
			}
		} else if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	if st := s.Stats(); int(st.Failed) != failed || failed < n/5 || failed > n*4/5 {
		t.Fatalf("%d of %d failed (stats %+v), want about half", failed, n, st)
	}
	zero := 0.0
	if _, err := s.Update(Update{ErrorFraction: &zero}); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		resp := post(t, c, base+"/chat/completions", chatBody(true), nil)
		drain(t, resp)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("after the fix: status %d", resp.StatusCode)
		}
	}
}

// TestAdminState: GET and POST /admin/state read and change the live
// settings; a bad change is refused whole, naming the key; with an API
// key, the endpoint needs it.
func TestAdminState(t *testing.T) {
	cfg := testConfig()
	cfg.APIKey = "k"
	s, base := startServer(t, cfg)
	c := testClient(t)
	admin := strings.TrimSuffix(base, "/v1") + "/admin/state"
	auth := map[string]string{"Authorization": "Bearer k"}
	do := func(body string, hdr map[string]string) (int, string) {
		var resp *http.Response
		if body == "" {
			req, _ := http.NewRequest(http.MethodGet, admin, nil)
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			var err error
			if resp, err = c.Do(req); err != nil {
				t.Fatal(err)
			}
		} else {
			resp = post(t, c, admin, body, hdr)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := do("", nil); code != http.StatusUnauthorized {
		t.Fatalf("GET without the key: %d, want 401", code)
	}
	code, body := do(`{"version":"v2","slots":4}`, auth)
	var st State
	if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil || st.Version != "v2" || st.Slots != 4 {
		t.Fatalf("POST: %d %s", code, body)
	}
	if st.Capacity <= 0 || !reflect.DeepEqual(s.State(), st) {
		t.Fatalf("state %+v vs %+v", st, s.State())
	}
	for _, tc := range []struct{ body, want string }{
		{`{"slots":0}`, "slots"},
		{`{"slots":64}`, "admission_limit"}, // above the admission limit (32)
		{`{"error_fraction":2}`, "error_fraction"},
		{`{"version":"a b"}`, "version"},
		{`{"ttft":{"kind":"fixed","value":-1}}`, "ttft"},
		{`{"colour":"red"}`, "want a JSON object"},
	} {
		code, body := do(tc.body, auth)
		if code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("POST %s: %d %q, want 400 naming %s", tc.body, code, body, tc.want)
		}
	}
	if got := s.State(); got.Version != "v2" || got.Slots != 4 || got.ErrorFraction != 0 || got.TTFT != cfg.TTFT {
		t.Fatalf("a refused change altered the state: %+v", got)
	}
	// A slow deploy: every request admitted from now on waits the new
	// prefill time, and capacity falls with it.
	before := s.State().Capacity
	if code, body := do(`{"ttft":{"kind":"fixed","value":0.3}}`, auth); code != http.StatusOK || !strings.Contains(body, `"ttft":{"kind":"fixed","value":0.3}`) {
		t.Fatalf("POST ttft: %d %s", code, body)
	}
	if after := s.State().Capacity; after >= before {
		t.Errorf("capacity %v after a slower prefill, was %v", after, before)
	}
	start := time.Now()
	resp := post(t, c, base+"/chat/completions", `{"model":"m","stream":true,"max_tokens":2,"messages":[{"role":"user","content":"hi"}]}`, auth)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if d := time.Since(start); resp.StatusCode != http.StatusOK || d < 300*time.Millisecond {
		t.Errorf("a request after the slow deploy: status %d in %v, want 200 after at least 300ms", resp.StatusCode, d)
	}
}
