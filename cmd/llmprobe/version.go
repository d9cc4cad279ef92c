package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/prometheus/common/version"
)

// build is what `llmprobe --version` prints and llmprobe_build_info
// carries: the values the Dockerfile sets with -ldflags -X on
// github.com/prometheus/common/version (Version from the VERSION file,
// Revision, Branch, BuildUser, BuildDate), each falling back, in a plain
// `go build`, to what the go tool recorded (debug.ReadBuildInfo: the main
// module's version, vcs.revision, vcs.time), then to "unknown".
type build struct {
	Version, Revision, Branch, BuildUser, BuildDate, GoVersion, Platform, Tags string
}

// buildVars are the -X-settable variables of prometheus/common/version.
type buildVars struct{ Version, Revision, Branch, BuildUser, BuildDate string }

// currentBuild resolves this binary's build information.
func currentBuild() build {
	bi, _ := debug.ReadBuildInfo()
	b := resolveBuild(buildVars{version.Version, version.Revision, version.Branch, version.BuildUser, version.BuildDate}, bi)
	if t := version.GetTags(); t != "" {
		b.Tags = t
	}
	return b
}

// resolveBuild fills what -ldflags -X left empty from bi (nil: none).
func resolveBuild(v buildVars, bi *debug.BuildInfo) build {
	b := build{Version: v.Version, Revision: v.Revision, Branch: v.Branch, BuildUser: v.BuildUser, BuildDate: v.BuildDate,
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Tags: "unknown"}
	if bi != nil {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = strings.TrimPrefix(bi.Main.Version, "v")
		}
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Revision == "" {
					b.Revision = s.Value
				}
			case "vcs.time":
				if b.BuildDate == "" {
					b.BuildDate = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if v.Revision == "" && b.Revision != "" && modified {
			b.Revision += "-modified"
		}
		if bi.GoVersion != "" {
			b.GoVersion = bi.GoVersion
		}
	}
	if b.Version == "" {
		b.Version = "devel"
	}
	for _, p := range []*string{&b.Revision, &b.Branch, &b.BuildUser, &b.BuildDate} {
		if *p == "" {
			*p = "unknown"
		}
	}
	return b
}

// print writes b in the layout of prometheus/common/version.Print.
func (b build) print(w io.Writer, program string) {
	fmt.Fprintf(w, "%s, version %s (branch: %s, revision: %s)\n", program, b.Version, b.Branch, b.Revision)
	fmt.Fprintf(w, "  build user:       %s\n", b.BuildUser)
	fmt.Fprintf(w, "  build date:       %s\n", b.BuildDate)
	fmt.Fprintf(w, "  go version:       %s\n", b.GoVersion)
	fmt.Fprintf(w, "  platform:         %s\n", b.Platform)
	fmt.Fprintf(w, "  tags:             %s\n", b.Tags)
}

// runVersion is `llmprobe version` and `llmprobe --version`.
func runVersion(_ context.Context, e env, args []string) error {
	fs := newFlagSet("version", e)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	currentBuild().print(e.stdout, "llmprobe")
	return nil
}
