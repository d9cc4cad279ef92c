package testutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Binary is the llmprobe command, built once per test process into a
// temporary directory. A package that runs the binary declares one
//
//	var llmprobe testutil.Binary
//
// calls llmprobe.Path(t) where it needs it, and removes the build when its
// tests end: func TestMain(m *testing.M) { os.Exit(llmprobe.Main(m)) }.
type Binary struct {
	// Race builds with the race detector (so that a data race in the
	// process fails the test too). Without it the binary is built plain,
	// whatever the tests run with: timings then are not the detector's.
	Race bool

	once sync.Once
	path string
	err  error
}

// Path builds the binary on the first call and returns its path; a failed
// build fails the test (and every later one).
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "llmprobe-bin")
		if err != nil {
			b.err = fmt.Errorf("building llmprobe: %w", err)
			return
		}
		b.path = filepath.Join(dir, "llmprobe")
		args := []string{"build", "-o", b.path}
		if b.Race {
			args = append(args, "-race")
		}
		args = append(args, "github.com/llmprobe/llmprobe/cmd/llmprobe")
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Remove removes the build, if there is one.
func (b *Binary) Remove() {
	if b.path != "" {
		_ = os.RemoveAll(filepath.Dir(b.path))
	}
}

// Main runs the tests, then removes the build; it returns the exit code
// for os.Exit.
func (b *Binary) Main(m *testing.M) int {
	code := m.Run()
	b.Remove()
	return code
}

// Run runs a command to its end, bounded by within, and returns its stdout,
// stderr and exit code. env nil inherits the test's environment. The test
// fails when the command does not end in time or cannot run at all.
func Run(t testing.TB, within time.Duration, env []string, name string, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not end within %v; stderr:\n%s", filepath.Base(name), args, within, Tail(errb.String(), 3000))
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, Tail(errb.String(), 3000))
	}
	return out.Bytes(), errb.Bytes(), cmd.ProcessState.ExitCode()
}

// Env is a minimal environment for a child process: PATH, HOME, TZ=UTC and
// the extra variables given.
func Env(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TZ=UTC"}, extra...)
}
