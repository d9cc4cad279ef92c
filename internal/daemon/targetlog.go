package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/slo"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/statuspage"
)

// defaultFailureLogEvery is how often a target that keeps failing gets a
// summary line (Options.FailureLogEvery).
const defaultFailureLogEvery = time.Minute

// maxLoggedError bounds the error text a failure line quotes.
const maxLoggedError = 160

// A daemon that speaks up: the log says when a target starts failing, how
// it keeps failing (at most one summary a FailureLogEvery), when it
// recovers (down how long, how many failed), and when each ladder starts
// and ends. Only baseline requests planned outside ladders judge the
// target here: a ladder's own load is meant to make it fail, and the
// ladder's end line reports that. Outcomes that are the prober's own doing
// (unsent, cancelled, censored, a stale pooled connection) judge nothing.
// Slowness and SLO burn are logged as target state changes
// (targetstate.go: "target state changed", SLOW, FAILING, DOWN).

// failureKind is what a failureLog line says.
type failureKind int

const (
	failureNone      failureKind = iota
	failureStarted               // the first failure after a success (or since start)
	failureContinues             // a summary while failures go on
	failureRecovered             // the first success after failures
)

// failureEvent is one line to log.
type failureEvent struct {
	kind     failureKind
	rec      *ledger.Record // the failure that started it (failureStarted)
	downFor  time.Duration  // since the planned send of the episode's first failing request
	failed   int            // failures in the episode so far
	recent   int            // failures since the last line (failureContinues)
	byReason string         // "http_error/status_503 ×12, timeout/first_content ×3" since the last line
}

// failureLog follows one target's baseline outcomes across reloads. The
// zero value is ready: healthy, nothing seen.
type failureLog struct {
	mu       sync.Mutex
	failing  bool
	since    time.Time // planned send of the episode's first failing request (or the last success seen after it)
	lastOK   time.Time // when the last success was seen
	lastLine time.Time
	failed   int
	recent   map[string]int // outcome/reason → failures since the last line
}

// judges reports whether rec says anything about the target's health, and
// whether it failed.
func judges(rec *ledger.Record) (judged, failed bool) {
	if rec.Traffic != ledger.TrafficBaseline || rec.During == ledger.DuringLadder {
		return false, false
	}
	// The availability SLI's own rule: unsent, cancelled, censored and
	// client-side artifacts (a stale pooled connection) judge nothing.
	return slo.Availability(string(rec.Outcome), string(rec.Reason))
}

// observe takes one finished record at wall time now, whose arrival was
// planned at wall time planned, and returns the line it calls for (kind
// failureNone: none).
func (f *failureLog) observe(now, planned time.Time, every time.Duration, rec *ledger.Record) failureEvent {
	judged, failed := judges(rec)
	if !judged {
		return failureEvent{}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !failed {
		defer func() { f.lastOK = now }()
	}
	switch {
	case failed && !f.failing:
		// The outage began when the failing request was planned (its
		// latency counts from there), not when its failure was seen: a
		// timeout is seen its timeout later. A success seen after that
		// planned send shows the target was still answering then.
		since := planned
		if f.lastOK.After(since) {
			since = f.lastOK
		}
		f.failing, f.since, f.lastLine, f.failed = true, since, now, 1
		f.recent = map[string]int{}
		return failureEvent{kind: failureStarted, rec: rec, failed: 1}
	case failed:
		f.failed++
		f.recent[string(rec.Outcome)+"/"+string(rec.Reason)]++
		if now.Sub(f.lastLine) < every {
			return failureEvent{}
		}
		ev := failureEvent{kind: failureContinues, downFor: now.Sub(f.since), failed: f.failed, byReason: countsText(f.recent)}
		for _, n := range f.recent {
			ev.recent += n
		}
		f.lastLine, f.recent = now, map[string]int{}
		return ev
	case f.failing:
		ev := failureEvent{kind: failureRecovered, downFor: now.Sub(f.since), failed: f.failed}
		f.failing, f.failed, f.recent = false, 0, nil
		return ev
	}
	return failureEvent{}
}

// countsText is "a ×3, b ×1", most frequent first.
func countsText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// logOutcome logs what a finished record of r says about its target.
func (r *targetRun) logOutcome(d *Daemon, rec *ledger.Record) {
	every := d.opts.FailureLogEvery
	if every <= 0 {
		every = defaultFailureLogEvery
	}
	// The arrival's planned send on the wall clock: the ledger's offsets
	// and the wall clock advance together.
	now := d.now()
	planned := now.Add(-max(d.led.Now()-rec.ArrivalPlanned(), 0))
	ev := r.state.failures.observe(now, planned, every, rec)
	switch ev.kind {
	case failureStarted:
		attrs := []any{"target", r.name, "class", ev.rec.Class, "outcome", string(ev.rec.Outcome), "reason", string(ev.rec.Reason)}
		if ev.rec.Status != 0 {
			attrs = append(attrs, "status", ev.rec.Status)
		}
		if ev.rec.Error != "" { // cleaned when recorded; cleaned again with this target's key
			attrs = append(attrs, "error", r.client.Redactor().String(ev.rec.Error, maxLoggedError))
		}
		d.log.Warn("target failing", attrs...)
	case failureContinues:
		d.log.Warn("target still failing", "target", r.name, "down_for", ev.downFor, "failed", ev.failed,
			"failed_since_last_line", ev.recent, "by_reason", ev.byReason)
	case failureRecovered:
		d.log.Info("target recovered", "target", r.name, "down_for", ev.downFor, "failed", ev.failed)
	}
}

// logLadderStart logs a ladder's start: what will run.
func (r *targetRun) logLadderStart(d *Daemon, trigger string) {
	lc := r.cfg.Ladder
	rates := make([]string, len(lc.Steps))
	for i, s := range lc.Steps {
		rates[i] = fmt.Sprintf("%g", s)
	}
	id := r.state.identity()
	d.log.Info("ladder started", "target", r.name, "trigger", trigger, "steps", len(lc.Steps),
		"rates_rps", strings.Join(rates, ","), "step_duration", lc.StepDuration.D(), "stop_at", lc.StopAt,
		"model", id.Model, "version", id.Version)
}

// logLadderEnd logs a ladder's end: its capacity with its bound and its
// knee, or why it aborted or stopped; interrupted when the daemon stopped
// it (err, or ctx done).
func (r *targetRun) logLadderEnd(d *Daemon, res ladder.Result, interrupted bool) {
	attrs := []any{"target", r.name, "trigger", res.Trigger, "took", res.Finished.Sub(res.Started), "steps_run", len(res.Steps)}
	if !res.Identity.IsZero() {
		attrs = append(attrs, "model", res.Identity.Model, "version", res.Identity.Version)
	}
	if !res.Complete() { // a deploy or restart cut it: a lower bound of the old identity
		attrs = append(attrs, "partial", string(res.Partial))
		if !res.ChangedTo.IsZero() {
			attrs = append(attrs, "changed_to", res.ChangedTo.String())
		}
	}
	if interrupted {
		d.log.Warn("ladder interrupted: no capacity from it", attrs...)
		return
	}
	// Numbers for machines beside the text, only when there is a figure:
	// no capacity is never a 0 req/s capacity.
	attrs = append(attrs, "capacity", statuspage.CapacityText(res.Capacity, res.CapacityStep, res.CapacityBound))
	if res.CapacityStep > 0 {
		attrs = append(attrs, "capacity_rps", res.Capacity, "capacity_bound", string(res.CapacityBound))
	}
	if res.KneeStep > 0 {
		attrs = append(attrs, "knee", stats.FormatRate(res.Knee)+" req/s", "knee_rps", res.Knee)
	} else {
		attrs = append(attrs, "knee", "none")
	}
	if inv := statuspage.InvalidSteps(res); inv != "" {
		attrs = append(attrs, "invalid_steps", inv)
	}
	if res.Stopped != "" {
		attrs = append(attrs, "stopped", res.Stopped)
	}
	if server := ladderServerLog(res); server != "" {
		attrs = append(attrs, "server", server)
	}
	level, msg := slog.LevelInfo, "ladder finished"
	if res.Aborted {
		level, msg = slog.LevelWarn, "ladder aborted"
		attrs = append(attrs, "abort_reason", res.AbortReason)
	}
	d.log.Log(context.Background(), level, msg, attrs...)
}
