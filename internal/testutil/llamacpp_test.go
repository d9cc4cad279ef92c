package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stopTB records Skip and Fatalf and stops the helper (by panicking with
// errFatal, recovered by stopped).
type stopTB struct {
	testing.TB
	skip, fatal string
}

func (s *stopTB) Helper() {}
func (s *stopTB) Skip(args ...any) {
	s.skip = fmt.Sprint(args...)
	panic(errFatal)
}
func (s *stopTB) Skipf(format string, args ...any) {
	s.skip = fmt.Sprintf(format, args...)
	panic(errFatal)
}
func (s *stopTB) Fatalf(format string, args ...any) {
	s.fatal = fmt.Sprintf(format, args...)
	panic(errFatal)
}

// stopped runs fn with a stopTB and returns what it returned, and its skip
// and fatal messages.
func stopped(t *testing.T, fn func(tb testing.TB) string) (got, skip, fatal string) {
	t.Helper()
	s := &stopTB{TB: t}
	defer func() {
		if p := recover(); p != nil && p != errFatal {
			panic(p)
		}
		skip, fatal = s.skip, s.fatal
	}()
	return fn(s), "", ""
}

// TestRequireLlamaCpp: a missing engine skips, or fails with
// LLMPROBE_LLAMACPP_REQUIRED=1; a folder with an executable llama-server
// is returned (when curl, which start.sh needs, is on PATH).
func TestRequireLlamaCpp(t *testing.T) {
	empty := t.TempDir()
	staged := t.TempDir()
	if err := os.WriteFile(filepath.Join(staged, "llama-server"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, curlErr := exec.LookPath("curl")
	tests := []struct {
		name, dir, required string
		wantDir, wantSkip   bool
		wantFatal           string
	}{
		{name: "absent", dir: empty, wantSkip: true},
		{name: "absent, required", dir: empty, required: "1", wantFatal: "LLMPROBE_LLAMACPP_REQUIRED=1: required"},
		{name: "staged", dir: staged, wantDir: curlErr == nil, wantSkip: curlErr != nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(LlamaCppDirEnv, tt.dir)
			t.Setenv(LlamaCppRequiredEnv, tt.required)
			got, skip, fatal := stopped(t, func(tb testing.TB) string { return RequireLlamaCpp(tb) })
			if testing.Short() {
				if !strings.Contains(skip, "-short") {
					t.Errorf("under -short: got %q, skip %q, fatal %q; want a -short skip", got, skip, fatal)
				}
				return
			}
			if (got == tt.dir) != tt.wantDir || (skip != "") != tt.wantSkip || !strings.Contains(fatal, tt.wantFatal) || (fatal == "") != (tt.wantFatal == "") {
				t.Errorf("got %q, skip %q, fatal %q; want dir %v, skip %v, fatal %q", got, skip, fatal, tt.wantDir, tt.wantSkip, tt.wantFatal)
			}
			if tt.wantSkip && !strings.Contains(skip, tt.dir) && curlErr == nil {
				t.Errorf("the skip %q does not name the folder %s", skip, tt.dir)
			}
		})
	}
}
