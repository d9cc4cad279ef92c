package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionOutput: `llmprobe --version` and `llmprobe version` print the
// same lines, in the layout of Prometheus' version package: version,
// branch, revision, build user, build date, Go version, platform.
func TestVersionOutput(t *testing.T) {
	t.Parallel()
	a := invoke(t.Context(), "--version")
	b := invoke(t.Context(), "version")
	if a.code != 0 || b.code != 0 || a.stderr != "" || b.stderr != "" {
		t.Fatalf("--version: exit %d %q; version: exit %d %q", a.code, a.stderr, b.code, b.stderr)
	}
	if a.stdout != b.stdout {
		t.Errorf("--version and version differ:\n%s\n%s", a.stdout, b.stdout)
	}
	lines := strings.Split(strings.TrimSuffix(a.stdout, "\n"), "\n")
	want := []string{"llmprobe, version ", "  build user:       ", "  build date:       ", "  go version:       " + runtime.Version(),
		"  platform:         " + runtime.GOOS + "/" + runtime.GOARCH, "  tags:             "}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), a.stdout)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d %q, want it to start with %q", i+1, lines[i], w)
		}
	}
	if !strings.Contains(lines[0], "(branch: ") || !strings.Contains(lines[0], ", revision: ") {
		t.Errorf("first line %q lacks branch and revision", lines[0])
	}
}

// TestResolveBuild: what -ldflags -X set wins; what it left empty comes
// from the go tool's build information (module version without its "v",
// vcs.revision marked -modified, vcs.time), then "devel" / "unknown".
func TestResolveBuild(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.1.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	tests := []struct {
		name string
		vars buildVars
		bi   *debug.BuildInfo
		want build
	}{
		{"ldflags", buildVars{"0.2.0", "def456", "main", "ci@build", "20260102-03:04:05"}, vcs,
			build{Version: "0.2.0", Revision: "def456", Branch: "main", BuildUser: "ci@build", BuildDate: "20260102-03:04:05", GoVersion: "go1.26.8"}},
		{"plain go build", buildVars{}, vcs,
			build{Version: "0.1.0", Revision: "abc123-modified", Branch: "unknown", BuildUser: "unknown", BuildDate: "2026-01-02T03:04:05Z", GoVersion: "go1.26.8"}},
		{"Dockerfile without build args", buildVars{Version: "0.1.0"}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			build{Version: "0.1.0", Revision: "unknown", Branch: "unknown", BuildUser: "unknown", BuildDate: "unknown", GoVersion: runtime.Version()}},
		{"nothing known", buildVars{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			build{Version: "devel", Revision: "unknown", Branch: "unknown", BuildUser: "unknown", BuildDate: "unknown", GoVersion: runtime.Version()}},
		{"no build information", buildVars{}, nil,
			build{Version: "devel", Revision: "unknown", Branch: "unknown", BuildUser: "unknown", BuildDate: "unknown", GoVersion: runtime.Version()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := resolveBuild(tc.vars, tc.bi)
			tc.want.Platform, tc.want.Tags = runtime.GOOS+"/"+runtime.GOARCH, "unknown"
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestEveryCommandVersion: --version has one meaning: on every command it
// prints the build (as `llmprobe version`) and exits 0, sim included (its
// deploy identity is --deploy-version).
func TestEveryCommandVersion(t *testing.T) {
	t.Parallel()
	want := invoke(t.Context(), "version").stdout
	for _, c := range commands() {
		r := invoke(t.Context(), c.name, "--version")
		if r.code != 0 || r.stdout != want {
			t.Errorf("llmprobe %s --version: exit %d\nstdout: %s\nstderr: %s", c.name, r.code, r.stdout, r.stderr)
		}
	}
}
