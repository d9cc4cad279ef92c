package daemon

import (
	"sort"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/slo"
	"github.com/llmprobe/llmprobe/internal/statuspage"
)

// stateLog remembers the state last logged for a target (kept across
// reloads), so that each change is logged once.
type stateLog struct {
	mu    sync.Mutex
	state slo.State
	since time.Time
	known bool
}

// change records st at now and reports the previous state and how long it
// lasted when st differs from it (the first state is a change from none).
func (l *stateLog) change(now time.Time, st slo.State) (prev slo.State, lasted time.Duration, changed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.known && l.state == st {
		return "", 0, false
	}
	prev, lasted = l.state, now.Sub(l.since)
	if !l.known {
		prev, lasted = "", 0
	}
	l.state, l.since, l.known = st, now, true
	return prev, lasted, true
}

// logStateChanges logs every target whose state changed since the last tick,
// once per change, with the figures that decided it. A target's first
// state is logged only when it is not OK or NO DATA (a healthy start says
// nothing new).
func (d *Daemon) logStateChanges() {
	now := d.now()
	d.mu.Lock()
	runs := make([]*targetRun, 0, len(d.targets))
	for _, r := range d.targets {
		runs = append(runs, r)
	}
	d.mu.Unlock()
	sort.Slice(runs, func(i, j int) bool { return runs[i].name < runs[j].name })
	for _, r := range runs {
		st, classes := r.state.status.Judge(now)
		r.logFailure(d, now, st == slo.StateDown || st == slo.StateFailing)
		prev, lasted, changed := r.state.stateLog.change(now, st)
		if !changed || (prev == "" && (st == slo.StateOK || st == slo.StateNoData)) {
			continue
		}
		attrs := []any{"target", r.name, "state", string(st), "from", string(prev)}
		if prev != "" {
			attrs = append(attrs, "previous_lasted", lasted.Round(time.Second))
		}
		if len(classes) > 0 {
			attrs = append(attrs, "figures", statuspage.StateFigures(classes[0]))
		}
		attrs = append(attrs, "next", statuspage.StateNext(st))
		switch st {
		case slo.StateOK, slo.StateNoData:
			d.log.Info("target state changed", attrs...)
		default:
			d.log.Warn("target state changed", attrs...)
		}
	}
}
