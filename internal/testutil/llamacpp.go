package testutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The real llama.cpp server (issue 18): an engine folder holding
// llama-server, a tiny random-weight model and start.sh, which starts the
// server on 127.0.0.1:PORT and prints its PID once GET /health answers 200.
const (
	// LlamaCppDirEnv names the engine folder (default: shared/engines/llama.cpp
	// beside the repository root).
	LlamaCppDirEnv = "LLMPROBE_LLAMACPP_DIR"
	// LlamaCppRequiredEnv set to "1" (as .ci/run does when the engine is
	// there) makes a missing engine fail the tests that need it instead of
	// skipping them.
	LlamaCppRequiredEnv = "LLMPROBE_LLAMACPP_REQUIRED"
)

// LlamaCppDir is the engine folder: $LLMPROBE_LLAMACPP_DIR, else
// ../shared/engines/llama.cpp beside the repository root (for a git
// worktree, beside its main checkout's root too); "" when no llama-server
// is found there.
func LlamaCppDir() string {
	if d := os.Getenv(LlamaCppDirEnv); d != "" {
		return d
	}
	root := repoRoot()
	if root == "" {
		return ""
	}
	cands := []string{filepath.Join(root, "..", "shared", "engines", "llama.cpp")}
	// A worktree's .git is a file: "gitdir: <main>/.git/worktrees/<name>".
	if b, err := os.ReadFile(filepath.Join(root, ".git")); err == nil {
		if gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: "); ok {
			if i := strings.Index(gd, string(filepath.Separator)+".git"+string(filepath.Separator)); i > 0 {
				cands = append(cands, filepath.Join(gd[:i], "..", "shared", "engines", "llama.cpp"))
			}
		}
	}
	for _, c := range cands {
		if _, err := os.Stat(filepath.Join(c, "llama-server")); err == nil {
			return c
		}
	}
	return ""
}

// repoRoot is the nearest directory above the working directory (a test's
// package directory) that holds go.mod; "" when none does.
func repoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

// RequireLlamaCpp returns the engine folder, or skips the test (fails it
// with LLMPROBE_LLAMACPP_REQUIRED=1) when llama-server, or curl that
// start.sh needs, is missing. Under -short it always skips.
func RequireLlamaCpp(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the real llama.cpp server is not started")
	}
	dir := LlamaCppDir()
	missing := ""
	if dir == "" {
		missing = fmt.Sprintf("llama.cpp's llama-server is absent: not in $%s nor in shared/engines/llama.cpp beside the repository; set %s to the folder holding llama-server, tiny.gguf and start.sh", LlamaCppDirEnv, LlamaCppDirEnv)
	} else if st, err := os.Stat(filepath.Join(dir, "llama-server")); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		missing = fmt.Sprintf("llama.cpp's llama-server is not at %s (an executable file); set %s to the folder holding llama-server, tiny.gguf and start.sh", filepath.Join(dir, "llama-server"), LlamaCppDirEnv)
	} else if _, err := exec.LookPath("curl"); err != nil {
		missing = "curl is not on PATH: " + filepath.Join(dir, "start.sh") + " needs it (.ci/run installs it)"
	}
	if missing != "" {
		if os.Getenv(LlamaCppRequiredEnv) == "1" {
			t.Fatalf("%s (%s=1: required)", missing, LlamaCppRequiredEnv)
		}
		t.Skip(missing)
	}
	return dir
}

// handedOut are the ports EnginePort returned in this test process.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// EnginePort returns a 127.0.0.1 port in 18000-19999 (the range the engine
// README asks for) that nothing listened on a moment ago, never the same
// twice in this test process.
func EnginePort(t testing.TB) int {
	t.Helper()
	for range 200 {
		p := 18000 + rand.IntN(2000)
		handedOut.Lock()
		seen := handedOut.ports[p]
		handedOut.ports[p] = true
		handedOut.Unlock()
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

// LlamaServer is one llama-server started by start.sh.
type LlamaServer struct {
	Dir   string
	Port  int
	PID   int    // llama-server's own PID
	Log   string // its log file, in the test's temporary directory
	pgid  int    // start.sh's process group, which the server stays in
	extra []string
}

// StartLlamaCpp starts llama-server (RequireLlamaCpp: it may skip) on a
// free port with start.sh, extra arguments last, and stops it (its whole
// process group) when the test ends, logging its log's tail if the test
// failed.
func StartLlamaCpp(t testing.TB, extra ...string) *LlamaServer {
	t.Helper()
	dir := RequireLlamaCpp(t)
	s := &LlamaServer{Dir: dir, Log: filepath.Join(t.TempDir(), "llama-server.log"), extra: extra}
	var err error
	for range 5 {
		s.Port = EnginePort(t)
		if err = s.start(); err == nil || !strings.Contains(err.Error(), "already listens") {
			break // a port taken since EnginePort checked it is tried again
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop(t, syscall.SIGTERM)
		if t.Failed() {
			b, _ := os.ReadFile(s.Log)
			t.Logf("--- llama-server log (%s), last lines:\n%s", s.Log, Tail(string(b), 3000))
		}
	})
	return s
}

// URL is the server's base URL, http://127.0.0.1:PORT.
func (s *LlamaServer) URL() string { return "http://127.0.0.1:" + strconv.Itoa(s.Port) }

// Start starts the server again on the same port, after Stop.
func (s *LlamaServer) Start(t testing.TB) {
	t.Helper()
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
}

// start runs start.sh in a process group of its own (which llama-server,
// started in the background, stays in) and reads the PID it prints.
func (s *LlamaServer) start() error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.Dir, "start.sh"), append([]string{strconv.Itoa(s.Port)}, s.extra...)...)
	cmd.Env = append(os.Environ(), "LOG="+s.Log)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("start.sh %d: %w\n%s", s.Port, err, Tail(stderr.String(), 3000))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || pid <= 1 {
		return fmt.Errorf("start.sh %d printed %q, not a PID", s.Port, out)
	}
	s.PID, s.pgid = pid, cmd.Process.Pid
	return nil
}

// ours reports whether PID is still a live llama-server (not a zombie, not
// a reused PID), so that no other process is ever signalled.
func (s *LlamaServer) ours() bool {
	if s.PID <= 1 {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.PID))
	if err != nil || !bytes.Contains(cmdline, []byte("llama-server")) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.PID))
	if err != nil {
		return false
	}
	if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	return true
}

// Signal sends sig to the server (SIGSTOP, SIGCONT…), if it is still ours.
func (s *LlamaServer) Signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if !s.ours() {
		t.Errorf("llama-server PID %d is gone; cannot send %v", s.PID, sig)
		return
	}
	if err := syscall.Kill(s.PID, sig); err != nil {
		t.Errorf("kill -%v %d: %v", sig, s.PID, err)
	}
}

// Stop ends the server's process group with sig (a stopped server is
// continued first) and waits until the server is gone, killing the group
// after 10 s. A server already gone is left alone.
func (s *LlamaServer) Stop(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if !s.ours() {
		return
	}
	kill := func(sig syscall.Signal) {
		if err := syscall.Kill(-s.pgid, sig); errors.Is(err, syscall.ESRCH) {
			_ = syscall.Kill(s.PID, sig)
		}
	}
	kill(sig)
	kill(syscall.SIGCONT)
	deadline := time.Now().Add(10 * time.Second)
	for s.ours() {
		if time.Now().After(deadline) {
			t.Logf("llama-server %d still running 10 s after %v: killed", s.PID, sig)
			kill(syscall.SIGKILL)
			deadline = time.Now().Add(10 * time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Tail is the last n bytes of s, after an ellipsis when cut (for failure
// messages quoting a process's output).
func Tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
