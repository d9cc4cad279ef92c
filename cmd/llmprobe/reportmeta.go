package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/protocol"
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

// runVerdict is the one verdict a run's reports lead with, made from the
// exit status the command ends with (status: probeExit's or ladderExit's,
// nil for exit 0; any other error is exit 1, llmprobe's own failure) so that the text, HTML and JSON cannot disagree with the
// exit code. pass says what the run met when nothing failed.
func runVerdict(status error, pass string) report.RunVerdict {
	var es exitStatus
	switch {
	case status == nil:
		return report.RunVerdict{Result: report.ResultPass, Exit: exitOK, Why: pass}
	case !errors.As(status, &es):
		return report.RunVerdict{Result: report.ResultFail, Exit: exitError, Cause: report.CauseProber, Why: status.Error()}
	}
	why := es.why
	if why == "" {
		why = pass
	}
	v := report.RunVerdict{Result: report.ResultFail, Exit: es.code, Cause: report.CauseTarget, Why: why}
	switch es.code {
	case exitOK:
		v.Result, v.Cause = report.ResultPass, ""
	case exitGeneratorInvalid:
		v.Result, v.Cause = report.ResultInvalid, report.CauseProber
	case exitNotWritten, exitError:
		v.Cause = report.CauseProber
	}
	return v
}

// probePass says what a probe that exits 0 met.
func probePass(gated bool, good, target float64) string {
	if !gated {
		return "no --slo-* gate was set, so the run passes on requests that ended ok (set --slo-ttft, --slo-tpot or --slo-e2e to judge latency)"
	}
	return fmt.Sprintf("gates met: good fraction %.1f%% ≥ --good-fraction %.1f%%", 100*good, 100*target)
}

// ladderPass says what a ladder that exits 0 measured.
func ladderPass(res ladder.Result) string {
	if res.CapacityStep == 0 {
		return "the ladder completed"
	}
	return fmt.Sprintf("capacity %s req/s (step %d, %s bound)", durfmt.Rate(res.Capacity), res.CapacityStep, res.CapacityBound)
}

// requestPath is the path the client sends its requests to (the base
// URL's path and the API's endpoint), sanitised for a report: ours, not
// the server's, but it may hold what a user typed.
func requestPath(t protocol.Target) string {
	base, err := t.BaseURL()
	if err != nil {
		return ""
	}
	req, err := t.Adapter.Request(context.Background(), base, protocol.Params{})
	if err != nil || req.URL == nil {
		return ""
	}
	return sanitize.String(sanitize.URL(req.URL.Path), 200)
}
