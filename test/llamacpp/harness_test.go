package llamacpp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
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
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Environment variables of this suite.
const (
	dirEnv      = "LLMPROBE_LLAMACPP_DIR"      // the engine folder (llama-server, tiny.gguf, start.sh)
	requiredEnv = "LLMPROBE_LLAMACPP_REQUIRED" // "1": a missing engine fails the tests instead of skipping them
)

// engineDir is the engine folder: $LLMPROBE_LLAMACPP_DIR, or
// <repository root>/../shared/engines/llama.cpp (CI runs in a fresh clone
// with shared/ beside it).
func engineDir() string {
	if d := os.Getenv(dirEnv); d != "" {
		return d
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		root = filepath.Join("..", "..")
	}
	return filepath.Join(filepath.Dir(root), "shared", "engines", "llama.cpp")
}

// requireEngine returns the engine folder, or skips the test (fails it with
// LLMPROBE_LLAMACPP_REQUIRED=1) when llama-server or curl (start.sh needs
// it) is missing. Under -short it always skips.
func requireEngine(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the llama.cpp tests start a real llama-server")
	}
	dir := engineDir()
	bin := filepath.Join(dir, "llama-server")
	missing := ""
	if st, err := os.Stat(bin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		missing = fmt.Sprintf("llama.cpp's llama-server is not at %s (an executable file); set %s to the folder holding llama-server, tiny.gguf and start.sh", bin, dirEnv)
	} else if _, err := exec.LookPath("curl"); err != nil {
		missing = "curl is not on PATH: " + filepath.Join(dir, "start.sh") + " needs it (.ci/run installs it)"
	}
	if missing != "" {
		if os.Getenv(requiredEnv) == "1" {
			t.Fatalf("%s (%s=1: required)", missing, requiredEnv)
		}
		t.Skip(missing)
	}
	return dir
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// binary builds llmprobe once per test process. It is built without the
// race detector, whatever the tests run with: these tests compare the
// client's timings with the server's, and the detector's slowdown would be
// part of the client's.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "llmprobe-llamacpp-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "llmprobe")
		out, err := exec.Command("go", "build", "-o", builtBin, "github.com/llmprobe/llmprobe/cmd/llmprobe").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		_ = os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// ports hands out each port once per test process.
var ports = struct {
	sync.Mutex
	used map[int]bool
}{used: map[int]bool{}}

// freePort returns a port in 18000-19999 that nothing listened on a moment
// ago, never the same twice in this process.
func freePort(t *testing.T) int {
	t.Helper()
	for range 200 {
		p := 18000 + rand.IntN(2000)
		ports.Lock()
		seen := ports.used[p]
		ports.used[p] = true
		ports.Unlock()
		if seen {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		_ = l.Close()
		return p
	}
	t.Fatal("no free port in 18000-19999")
	return 0
}

// server is one llama-server started by start.sh.
type server struct {
	dir  string
	port int
	pid  int
	log  string // its log file
}

func (s *server) base() string { return "http://127.0.0.1:" + strconv.Itoa(s.port) }

// startServer starts llama-server on port with start.sh (extra arguments
// last) and stops it when the test ends.
func startServer(t *testing.T, dir string, port int, extra ...string) *server {
	t.Helper()
	s := &server{dir: dir, port: port, log: filepath.Join(t.TempDir(), "llama-server.log")}
	s.start(t, extra...)
	t.Cleanup(func() {
		s.stop(t, syscall.SIGTERM)
		if t.Failed() {
			b, _ := os.ReadFile(s.log)
			t.Logf("--- llama-server log (%s), last lines:\n%s", s.log, tailString(string(b), 3000))
		}
	})
	return s
}

// start runs start.sh, which prints the PID once GET /health answers 200.
func (s *server) start(t *testing.T, extra ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.dir, "start.sh"), append([]string{strconv.Itoa(s.port)}, extra...)...)
	cmd.Env = append(os.Environ(), "LOG="+s.log)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("start.sh %d: %v\n%s", s.port, err, tailString(stderr.String(), 3000))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || pid <= 1 {
		t.Fatalf("start.sh %d printed %q, not a PID", s.port, out)
	}
	s.pid = pid
}

// ours reports whether pid is still a live llama-server (not a zombie, not
// a reused PID), so that no other process is ever signalled.
func (s *server) ours() bool {
	if s.pid <= 1 {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.pid))
	if err != nil || !bytes.Contains(cmdline, []byte("llama-server")) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid))
	if err != nil {
		return false
	}
	if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	return true
}

// signal sends sig to the server, if it is still ours.
func (s *server) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if !s.ours() {
		t.Errorf("llama-server PID %d is gone; cannot send %v", s.pid, sig)
		return
	}
	if err := syscall.Kill(s.pid, sig); err != nil {
		t.Errorf("kill -%v %d: %v", sig, s.pid, err)
	}
}

// stop ends the server with sig (a stopped one is continued first) and
// waits until it is gone, killing it after 10 s.
func (s *server) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if !s.ours() {
		return
	}
	_ = syscall.Kill(s.pid, sig)
	_ = syscall.Kill(s.pid, syscall.SIGCONT)
	deadline := time.Now().Add(10 * time.Second)
	for s.ours() {
		if time.Now().After(deadline) {
			_ = syscall.Kill(s.pid, syscall.SIGKILL)
			deadline = time.Now().Add(10 * time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var httpClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

// scrapeMetrics reads a Prometheus text exposition into series → value
// (counters, gauges and untyped values; histograms as _count).
func scrapeMetrics(url string) (map[string]float64, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: status %d", url, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := name + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Untyped != nil:
				out[key] = m.GetUntyped().GetValue()
			case m.Histogram != nil:
				out[name+"_count{"+strings.Join(labels, ",")+"}"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out, nil
}

// tokensPredicted is llama.cpp's llamacpp:tokens_predicted_total now.
func (s *server) tokensPredicted(t *testing.T) float64 {
	t.Helper()
	m, err := scrapeMetrics(s.base() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	v, ok := m["llamacpp:tokens_predicted_total{}"]
	if !ok {
		t.Fatalf("%s/metrics has no llamacpp:tokens_predicted_total", s.base())
	}
	return v
}

// runLedger is one ledger file: its run header and records.
type runLedger struct {
	header  ledger.RunHeader
	records []ledger.Record
}

// readLedger parses a JSONL ledger (a run header, then records); the
// records must decode into ledger.Record with no unknown field.
func readLedger(path string) (runLedger, error) {
	var lf runLedger
	f, err := os.Open(path)
	if err != nil {
		return lf, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if !utf8.Valid(b) {
			return lf, fmt.Errorf("%s:%d: not valid UTF-8", path, line)
		}
		if line == 1 {
			if err := json.Unmarshal(b, &lf.header); err != nil || lf.header.Kind != "run" {
				return lf, fmt.Errorf("%s:1: not a run header (%v)", path, err)
			}
			continue
		}
		var r ledger.Record
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return lf, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		lf.records = append(lf.records, r)
	}
	return lf, sc.Err()
}

// unclean says what is wrong with a server-derived string, or "".
func unclean(s string, maxLen int) string {
	switch {
	case !utf8.ValidString(s):
		return "not valid UTF-8"
	case len(s) > maxLen:
		return fmt.Sprintf("%d bytes, over %d", len(s), maxLen)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return fmt.Sprintf("holds the unprintable %U", r)
		}
	}
	return ""
}

// run runs the built llmprobe to completion (bounded by within) and
// returns its stdout, stderr and exit code.
func run(t *testing.T, within time.Duration, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TZ=UTC"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("llmprobe %s did not end within %v; stderr:\n%s", args[0], within, tailString(errb.String(), 3000))
	}
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("llmprobe %s: %v", args[0], err)
	}
	return out.Bytes(), errb.Bytes(), code
}

func tailString(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
