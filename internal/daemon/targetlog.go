package daemon

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/slo"
	"github.com/llmprobe/llmprobe/internal/statuspage"
)

// defaultFailureLogEvery is how often a target that keeps failing gets a
// summary line (Options.FailureLogEvery).
const defaultFailureLogEvery = time.Minute

// maxLoggedError bounds the error text a failure line quotes.
const maxLoggedError = 160

// A daemon that speaks up: the log says when a target starts failing, how
// it keeps failing (at most one summary a FailureLogEvery), when it
// recovers (down how long, how many sent and failed over the episode), and
// when each ladder starts and ends. The failing and recovered lines follow
// the target's state (targetstate.go), with its hysteresis: a target
// whose state is DOWN or FAILING is failing, and it recovers when its state
// leaves them, so a target failing every other request speaks once, not
// at every alternation. Only baseline requests planned outside ladders are
// counted: a ladder's own load is meant to make it fail, and the ladder's
// end line reports that. Outcomes that are the prober's own doing (unsent,
// cancelled, censored, a stale pooled connection) count nothing.

// failureKind is what a failureLog line says.
type failureKind int

const (
	failureNone      failureKind = iota
	failureStarted               // the state turned DOWN or FAILING
	failureContinues             // a summary while it stays so
	failureRecovered             // the state left DOWN and FAILING
)

// failureEvent is one line to log.
type failureEvent struct {
	kind     failureKind
	rec      *ledger.Record // the episode's first failure (failureStarted)
	downFor  time.Duration  // since the planned send of the episode's first failing request
	sent     int            // requests counted in the episode so far
	failed   int            // failures in the episode so far
	recent   int            // failures since the last line (failureContinues)
	byReason string         // "http_error/status_503 ×12, timeout/first_content ×3": since the last line (summary), over the episode (recovered)
}

// failureLog follows one target's baseline outcomes across reloads and
// turns its state changes into lines. The zero value is ready: healthy,
// nothing seen.
type failureLog struct {
	mu      sync.Mutex
	failing bool // an episode is open: the state is DOWN or FAILING
	first   *ledger.Record
	since   time.Time // planned send of the first failure since the last success (or that success, if seen later)
	lastOK  time.Time // when the last success was seen
	// okAfter is when the first success after the episode's last failure
	// was seen (zero: failures go on): where its down time ends.
	okAfter      time.Time
	lastLine     time.Time
	sent, failed int
	all, recent  map[string]int // outcome/reason → failures over the episode, since the last line
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

// observe counts one finished record at wall time now, whose arrival was
// planned at wall time planned. Outside an episode a success starts the
// count afresh: an episode counts from the first failure after the last
// success before it.
func (f *failureLog) observe(now, planned time.Time, rec *ledger.Record) {
	judged, failed := judges(rec)
	if !judged {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !failed {
		f.lastOK = now
		if !f.failing {
			f.first, f.sent, f.failed, f.all, f.recent = nil, 0, 0, nil, nil
			return
		}
		f.sent++
		if f.okAfter.IsZero() {
			f.okAfter = now
		}
		return
	}
	if f.first == nil && !f.failing {
		// The outage began when the failing request was planned (its
		// latency counts from there), not when its failure was seen: a
		// timeout is seen its timeout later. A success seen after that
		// planned send shows the target was still answering then.
		f.first, f.since = rec, planned
		if f.lastOK.After(planned) {
			f.since = f.lastOK
		}
		f.all, f.recent = map[string]int{}, map[string]int{}
	}
	f.sent++
	f.failed++
	f.okAfter = time.Time{}
	k := string(rec.Outcome) + "/" + string(rec.Reason)
	f.all[k]++
	f.recent[k]++
}

// judged takes the target's state at now (failing: DOWN or FAILING) and
// returns the line it calls for (kind failureNone: none).
func (f *failureLog) judged(now time.Time, failing bool, every time.Duration) failureEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case failing && !f.failing:
		if f.first == nil { // the failures that turned it were counted before a restart of the count
			return failureEvent{}
		}
		f.failing, f.lastLine, f.recent = true, now, map[string]int{}
		return failureEvent{kind: failureStarted, rec: f.first, sent: f.sent, failed: f.failed}
	case failing:
		n := 0
		for _, c := range f.recent {
			n += c
		}
		if n == 0 || now.Sub(f.lastLine) < every {
			return failureEvent{}
		}
		ev := failureEvent{kind: failureContinues, downFor: now.Sub(f.since), sent: f.sent, failed: f.failed, recent: n, byReason: countsText(f.recent)}
		f.lastLine, f.recent = now, map[string]int{}
		return ev
	case f.failing:
		end := f.okAfter
		if end.IsZero() {
			end = now
		}
		ev := failureEvent{kind: failureRecovered, downFor: end.Sub(f.since), sent: f.sent, failed: f.failed, byReason: countsText(f.all)}
		f.failing, f.first, f.okAfter, f.sent, f.failed, f.all, f.recent = false, nil, time.Time{}, 0, 0, nil, nil
		return ev
	}
	return failureEvent{}
}

// countsText is "a ×3, b ×1", most frequent first.
func countsText(m map[string]int) string { return durfmt.Counts(m, "%s ×%d") }

// countOutcome counts what a finished record of r says about its target
// (the failing/recovered lines are spoken on state changes: logFailure).
func (r *targetRun) countOutcome(d *Daemon, rec *ledger.Record) {
	// The arrival's planned send on the wall clock: the ledger's offsets
	// and the wall clock advance together.
	now := d.now()
	planned := now.Add(-max(d.led.Now()-rec.ArrivalPlanned(), 0))
	r.state.failures.observe(now, planned, rec)
}

// logFailure logs the failing, still-failing and recovered lines the
// target's state at now calls for (failing: DOWN or FAILING).
func (r *targetRun) logFailure(d *Daemon, now time.Time, failing bool) {
	every := d.opts.FailureLogEvery
	if every <= 0 {
		every = defaultFailureLogEvery
	}
	ev := r.state.failures.judged(now, failing, every)
	switch ev.kind {
	case failureStarted:
		attrs := []any{"target", r.name, "class", ev.rec.Class, "outcome", string(ev.rec.Outcome), "reason", string(ev.rec.Reason)}
		if ev.rec.Status != 0 {
			attrs = append(attrs, "status", ev.rec.Status)
		}
		if ev.rec.Error != "" && r.client != nil { // cleaned when recorded; cleaned again with this target's key
			attrs = append(attrs, "error", r.client.Redactor().String(ev.rec.Error, maxLoggedError))
		}
		attrs = append(attrs, "sent", ev.sent, "failed", ev.failed)
		d.log.Warn("target failing", attrs...)
	case failureContinues:
		d.log.Warn("target still failing", "target", r.name, "down_for", ev.downFor, "sent", ev.sent, "failed", ev.failed,
			"failed_since_last_line", ev.recent, "by_reason", ev.byReason)
	case failureRecovered:
		d.log.Info("target recovered", "target", r.name, "down_for", ev.downFor, "sent", ev.sent, "failed", ev.failed, "by_reason", ev.byReason)
	}
}

// logLadderStart logs a ladder's start: what will run.
func (r *targetRun) logLadderStart(d *Daemon, trigger string) {
	lc := r.cfg.Ladder
	id := r.state.identity()
	d.log.Info("ladder started", "target", r.name, "trigger", trigger, "steps", len(lc.Steps),
		"rates_rps", statuspage.Rates(lc.Steps), "step_duration", lc.StepDuration.D(), "stop_at", lc.StopAt,
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
		attrs = append(attrs, "knee", statuspage.CapacityText(res.Knee, res.KneeStep, ladderresult.BoundMeasured), "knee_rps", res.Knee)
	} else {
		attrs = append(attrs, "knee", "none")
	}
	if inv := statuspage.InvalidSteps(res); inv != "" {
		attrs = append(attrs, "invalid_steps", inv)
	}
	if res.Stopped != "" {
		attrs = append(attrs, "stopped", res.Stopped)
	}
	if server := statuspage.LadderServerLog(res); server != "" {
		attrs = append(attrs, "server", server)
	}
	level, msg := slog.LevelInfo, "ladder finished"
	if res.Aborted {
		level, msg = slog.LevelWarn, "ladder aborted"
		attrs = append(attrs, "abort_reason", res.AbortReason)
	}
	d.log.Log(context.Background(), level, msg, attrs...)
}
