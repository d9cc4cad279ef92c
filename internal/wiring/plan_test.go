package wiring

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol/sse"
)

// loadTarget loads minimal plus extra target keys and returns the target.
func loadTarget(t *testing.T, extra string) config.Target {
	t.Helper()
	c, err := Load(config.Options{BuiltIn: []byte(minimal + extra), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	return c.Targets[0]
}

func TestSeed(t *testing.T) {
	if got := Seed(loadTarget(t, "    baseline: {seed: 42}\n")); got != 42 {
		t.Errorf("configured seed: %d", got)
	}
	tg := loadTarget(t, "")
	if got := Seed(tg); got == 0 || got != config.SeedFor("t1", 0) {
		t.Errorf("derived seed: %d", got)
	}
}

func TestRetry(t *testing.T) {
	tg := loadTarget(t, "    baseline: {seed: 7}\n    retries: {max_attempts: 3, backoff: 200ms, max_backoff: 2s, jitter: 0.25}\n")
	r, err := Retry(tg)
	if err != nil {
		t.Fatal(err)
	}
	if r.MaxAttempts != 3 || r.Backoff != 200*time.Millisecond || r.MaxBackoff != 2*time.Second || r.Jitter != 0.25 || r.Seed != 7 {
		t.Errorf("retry %+v", r)
	}
	if b := Backoff(tg); b.Base != r.Backoff || b.Max != r.MaxBackoff || b.Jitter != r.Jitter || b.Seed != 7 {
		t.Errorf("backoff %+v", b)
	}
	tg.Retries.Jitter = 2 // built in code, past validation
	if _, err := Retry(tg); err == nil || !strings.HasPrefix(err.Error(), "retries: ") {
		t.Errorf("bad jitter: %v", err)
	}
}

func TestInjection(t *testing.T) {
	if _, ok := Injection(loadTarget(t, ""), 0); ok {
		t.Error("injection on without cancellation.fraction")
	}
	tg := loadTarget(t, "    baseline: {seed: 5}\n    cancellation: {fraction: 0.3, delay: 100ms, max_delay: 300ms}\n")
	a, ok := Injection(tg, 0)
	b, _ := Injection(tg, 1)
	if !ok || a.Fraction != 0.3 || a.Delay != 100*time.Millisecond || a.MaxDelay != 300*time.Millisecond || a.Seed != 5 {
		t.Errorf("class 0: %+v %v", a, ok)
	}
	if b.Seed == a.Seed {
		t.Error("two classes draw their cancellations from the same seed")
	}
}

func TestBudget(t *testing.T) {
	if _, ok, err := Budget(loadTarget(t, "")); ok || err != nil {
		t.Errorf("no budget: ok %v err %v", ok, err)
	}
	l, ok, err := Budget(loadTarget(t, "    budget: {tokens_per_day: 1000, zone: Europe/Paris}\n"))
	if !ok || err != nil || l.TokensPerDay != 1000 || l.RequestsPerDay != 0 || l.Zone.String() != "Europe/Paris" {
		t.Errorf("budget %+v ok %v err %v", l, ok, err)
	}
	tg := loadTarget(t, "    budget: {requests_per_day: 10}\n")
	tg.Budget.Zone = "Mars/Base"
	if _, _, err := Budget(tg); err == nil || !strings.Contains(err.Error(), "budget.zone") {
		t.Errorf("bad zone: %v", err)
	}
}

// TestBaseline: baseline.rate is split by class weight, each class has its
// own reproducible arrivals, and the stream keeps the target's in-flight
// cap and retry policy.
func TestBaseline(t *testing.T) {
	tg := loadTarget(t, "    max_in_flight: 9\n    retries: {max_attempts: 2}\n    baseline: {rate: 2, arrival: constant}\n    classes: [{name: a, weight: 3}, {name: b, weight: 1}]\n")
	classes, err := Classes(tg, 0)
	if err != nil {
		t.Fatal(err)
	}
	offsets := func(i int) []time.Duration {
		p, err := Baseline(tg, classes, i)
		if err != nil {
			t.Fatal(err)
		}
		var out []time.Duration
		for range 5 {
			off, _ := p.Open.Arrivals.Next()
			out = append(out, off)
		}
		return out
	}
	a, err := Baseline(tg, classes, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Baseline(tg, classes, 1)
	if a.Rate != 1.5 || b.Rate != 0.5 {
		t.Errorf("rates %v and %v, want 1.5 and 0.5", a.Rate, b.Rate)
	}
	if a.Open.MaxInFlight != 9 || a.Open.Retry.MaxAttempts != 2 {
		t.Errorf("open config %+v", a.Open)
	}
	if x, y := offsets(0), offsets(0); x[4] != y[4] {
		t.Errorf("arrivals not reproducible: %v vs %v", x, y)
	}
	// constant at 0.5 req/s: one arrival every 2s.
	if o := offsets(1); o[1]-o[0] != 2*time.Second {
		t.Errorf("class b arrivals %v, want 2s apart", o)
	}
}

// TestClient: the client sends the configured and header_env headers to
// the target's base URL, and its Redactor masks the header_env value.
func TestClient(t *testing.T) {
	t.Setenv("WIRING_TEST_TOKEN", "tok-SECRET-123")
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			got <- r.Header.Clone()
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	tg := loadTarget(t, "    headers: {X-Team: blue}\n    header_env: {X-Api-Token: WIRING_TEST_TOKEN}\n")
	tg.URL = srv.URL + "/v1/"
	hooked := false
	hook := func(ctx context.Context, _ *http.Request) (context.Context, func(ledger.Outcome, ledger.Reason)) {
		hooked = true
		return ctx, func(ledger.Outcome, ledger.Reason) {}
	}
	c, target, err := Client(tg, ClientOptions{Buffers: sse.NewBudget(1 << 20), Hook: hook})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	if target.URL.String() != srv.URL+"/v1" || target.Adapter.Name() != tg.API || target.Hook == nil {
		t.Errorf("target %+v", target)
	}
	resp, err := c.Get(context.Background(), target, "/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := <-got; h.Get("X-Team") != "blue" || h.Get("X-Api-Token") != "tok-SECRET-123" {
		t.Errorf("headers sent: %v", h)
	}
	target.Hook(context.Background(), nil)
	if !hooked {
		t.Error("hook not passed on")
	}
	if s := c.Redactor().String("echo tok-SECRET-123", 100); strings.Contains(s, "SECRET") {
		t.Errorf("header_env value not redacted: %q", s)
	}
	tg.HeaderEnv = map[string]string{"X-Other": "WIRING_TEST_UNSET_VAR"}
	if _, _, err := Client(tg, ClientOptions{}); err == nil || !strings.Contains(err.Error(), "WIRING_TEST_UNSET_VAR") {
		t.Errorf("unset header_env variable: %v", err)
	}
	tg.HeaderEnv, tg.API = nil, "grpc"
	if _, _, err := Client(tg, ClientOptions{}); err == nil || !strings.HasPrefix(err.Error(), "api: ") {
		t.Errorf("bad api: %v", err)
	}
}
