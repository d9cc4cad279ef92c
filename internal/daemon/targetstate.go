package daemon

import (
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/statuspage"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// stateLog remembers the state last logged for a target (kept across
// reloads), so that each change is logged once.
type stateLog struct {
	mu    sync.Mutex
	state string
	since time.Time
	known bool
}

// change records st at now and reports the previous state and how long it
// lasted when st differs from it (the first state is a change from none).
func (l *stateLog) change(now time.Time, st string) (prev string, lasted time.Duration, changed bool) {
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

// quietStates are the states a target's first state is not logged in (a
// healthy or idle start says nothing new), and the states logged at info.
var quietStates = []string{statuspage.StateOK, statuspage.StateNoData, statuspage.StateTooFew, statuspage.StateLadder, statuspage.StateDisabled}

// logStateChanges logs every target (in its turn: inTurn) whose state
// changed since it was last judged, once per change, with its evidence and next step: the state its
// card shows (statuspage.JudgeTarget), so the log and the page never
// disagree. The failing and recovered lines follow the same state.
func (d *Daemon) logStateChanges() {
	now := d.now()
	var host verdict.HostHealth
	if d.host != nil {
		host = d.host.Recent()
	}
	d.mu.Lock()
	runs := make([]*targetRun, 0, len(d.targets))
	for _, r := range d.targets {
		runs = append(runs, r)
	}
	d.mu.Unlock()
	sort.Slice(runs, func(i, j int) bool { return runs[i].name < runs[j].name })
	tick := d.ticks.Load()
	for _, r := range runs {
		if !inTurn(r, tick, len(runs)) {
			continue
		}
		in := d.targetInput(r, now, host)
		d.mu.Lock() // the last ladder's result, looked up, not copied for every target each second
		res, ok := d.last[r.name]
		d.mu.Unlock()
		if ok {
			in.Last = &res
		}
		st := statuspage.JudgeTarget(now, d.start, in)
		r.logFailure(d, now, statuspage.Failing(st.State))
		prev, lasted, changed := r.state.stateLog.change(now, st.State)
		if !changed || (prev == "" && slices.Contains(quietStates, st.State)) {
			continue
		}
		attrs := []any{"target", r.name, "state", st.State, "from", prev}
		if prev != "" {
			attrs = append(attrs, "previous_lasted", lasted.Round(time.Second))
		}
		attrs = append(attrs, "figures", st.Figures, "next", st.Next)
		if slices.Contains(quietStates, st.State) {
			d.log.Info("target state changed", attrs...)
		} else {
			d.log.Warn("target state changed", attrs...)
		}
	}
}
