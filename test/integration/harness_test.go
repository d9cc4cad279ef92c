package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testutil"
)

// prometheusBin returns the Prometheus binary or skips the test.
func prometheusBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("full tier: the integration tests run the built binary under a real Prometheus for minutes")
	}
	return testutil.Prometheus(t, "run the integration tests against a real Prometheus 3.x")
}

var llmprobe testutil.Binary

// llmprobeBin builds the binary once per test process.
func llmprobeBin(t *testing.T) string { return llmprobe.Path(t) }

func TestMain(m *testing.M) { os.Exit(llmprobe.Main(m)) }

// freeAddr returns a free 127.0.0.1 address.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// proc is a child process whose output is kept for failure messages.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *testutil.SyncBuffer
	done chan error
}

// start runs a process until the test ends; it is stopped with SIGTERM and
// its output is logged when the test failed.
func start(t *testing.T, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(bin, args...), out: &testutil.SyncBuffer{}, done: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.stop(t, 40*time.Second)
		if t.Failed() {
			t.Logf("--- %s output:\n%s", name, testutil.Tail(p.out.String(), 4000))
		}
	})
	return p
}

func (p *proc) stop(t *testing.T, grace time.Duration) error {
	if p.cmd.ProcessState != nil {
		return nil
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		err := <-p.done
		p.done <- err
		t.Errorf("%s did not stop within %v of SIGINT", p.name, grace)
		return err
	}
}

// waitHTTP waits until url answers 200.
func waitHTTP(t *testing.T, u string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		resp, err := http.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s not ready within %v", u, within)
}

// queryRange runs a range query ending now and returns its series count.
func queryRange(ctx context.Context, promURL, q string, span, step time.Duration) (int, error) {
	now := time.Now()
	v := url.Values{"query": {q}, "start": {fmt.Sprint(now.Add(-span).Unix())}, "end": {fmt.Sprint(now.Unix())},
		"step": {fmt.Sprint(step.Seconds())}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, promURL+"/api/v1/query_range?"+v.Encode(), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status, Error, ErrorType string
		Data                     struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, fmt.Errorf("query_range %q: decode: %v: %s", q, err, testutil.Tail(string(body), 300))
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("query_range %q: %s: %s", q, r.ErrorType, r.Error)
	}
	return len(r.Data.Result), nil
}

// promResult is one sample of an instant query: a float or a native histogram.
type promResult struct {
	Metric    map[string]string `json:"metric"`
	Value     []any             `json:"value"`
	Histogram []any             `json:"histogram"`
}

// query runs an instant PromQL query.
func query(ctx context.Context, promURL, q string) ([]promResult, error) {
	u := promURL + "/api/v1/query?" + url.Values{"query": {q}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status    string `json:"status"`
		Error     string `json:"error"`
		ErrorType string `json:"errorType"`
		Data      struct {
			ResultType string       `json:"resultType"`
			Result     []promResult `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("query %q: decode: %v: %s", q, err, testutil.Tail(string(body), 300))
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %q: %s: %s", q, r.ErrorType, r.Error)
	}
	if r.Data.ResultType == "scalar" {
		return []promResult{{Value: anySlice(body)}}, nil
	}
	return r.Data.Result, nil
}

func anySlice(body []byte) []any {
	var r struct {
		Data struct {
			Result []any `json:"result"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &r)
	return r.Data.Result
}

// scalarOf returns the float value of a sample.
func scalarOf(r promResult) (float64, bool) {
	if len(r.Value) != 2 {
		return 0, false
	}
	s, ok := r.Value[1].(string)
	if !ok {
		return 0, false
	}
	var f float64
	if _, err := fmt.Sscan(s, &f); err != nil {
		return 0, false
	}
	return f, true
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func replaceAll(s string, kv ...string) string { return strings.NewReplacer(kv...).Replace(s) }

// httpGet returns the body of a GET of u (an error unless 200).
func httpGet(ctx context.Context, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return string(body), err
}
