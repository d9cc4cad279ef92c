package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// commandLine is how a report names the command that made it: "llmprobe
// SUB ARGS…", each argument redacted (a URL's user info and secret query
// values, and every secret the client knows: its API key and header_env
// values) and quoted when it holds a space. Keys are never flags
// (--api-key-env names a variable), so what remains is safe to paste.
func commandLine(sub string, args []string, red *sanitize.Redactor) string {
	parts := []string{"llmprobe", sub}
	for _, a := range args {
		a = red.String(sanitize.URL(a), 512)
		if a == "" || strings.ContainsAny(a, " \t'\"") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// arrivalName describes an arrival process for a report's header.
func arrivalName(kind string, burstiness float64) string {
	if kind == "" {
		kind = "poisson"
	}
	if kind == "gamma" {
		return fmt.Sprintf("gamma (k = %g)", burstiness)
	}
	return kind
}

// reportMeta is the part of a report's header every command shares.
func reportMeta(t *targetFlags, base, sub string, args []string, red *sanitize.Redactor, api string, window time.Duration, windowName string) report.Meta {
	return report.Meta{
		Version: currentBuild().Version, Command: commandLine(sub, args, red),
		Target: t.displayName(base), Model: t.target().Model, API: api,
		Window: window, WindowName: windowName,
	}
}
