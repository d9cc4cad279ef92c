package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// ErrNotCoordinator is returned by Coordinate on a shard other than 0.
var ErrNotCoordinator = errors.New("fleet: only shard 0 coordinates fleet ladders")

// gatherEvery is how often the coordinator asks again for missing results.
const gatherEvery = 250 * time.Millisecond

// Coordinate runs one fleet ladder from shard 0: it announces it (its first
// step AnnounceLead from now), offers this shard's share, checks the
// shards' merged in-step counts every CheckEvery, gathers every shard's
// results of each step by DecisionLead before the next, merges and judges
// them with the one ladder judge (abort rules, stop_at, capacity and knee)
// and tells the shards whether the next step may start. Any shard's own
// abort aborts the fleet's ladder. The result is appended to the history
// file (when configured) with each shard's share of each step. A cancelled
// ctx aborts the ladder ("interrupted") and returns ctx's error.
func (l *Ladder) Coordinate(ctx context.Context, trigger string) (Result, error) {
	if !l.n.id.Coordinator() {
		return Result{}, ErrNotCoordinator
	}
	cfg := l.cfg
	start := l.n.now().Add(AnnounceLead)
	a := Announcement{
		ID: fmt.Sprintf("%s-%d", cfg.Target, start.UnixMilli()), Target: cfg.Target, Trigger: trigger, Start: start,
		PeriodSeconds: l.period.Seconds(), Steps: cfg.Steps, Fingerprint: l.print, Allowed: 1, State: StateRunning,
		StepStarts: []time.Time{start},
	}
	l.publish(a)
	log := l.log().With("ladder", a.ID)
	log.Info("fleet ladder announced", "start", start, "steps", len(cfg.Steps), "shards", l.n.id.Shards)
	ident := identityNow(cfg)
	res := Result{
		Result: ladder.Result{Target: cfg.Target, Trigger: trigger, Started: start, StopAt: string(cfg.StopAt), Identity: ident,
			StepDuration: cfg.StepDuration, GoodFractionTarget: cfg.GoodFractionTarget, KneeFactor: cfg.KneeFactor,
			ClassGates: map[string]stats.Gates{}},
		Fleet: Fleet{Scope: ScopeFleet, LadderID: a.ID, Shards: l.n.id.Shards},
	}
	for _, c := range cfg.Classes {
		res.ClassGates[c.Name] = c.Gates
	}
	shareDone := make(chan struct{})
	go func() {
		defer close(shareDone)
		l.runShare(ctx, a, l.ownState(a.ID))
	}()
	var steps []ladderresult.LadderStep
	for i := 1; i <= len(cfg.Steps); i++ {
		if why := l.liveChecks(ctx, a, i); why != "" {
			l.abort(&a, why)
			log.Warn("fleet ladder aborted inside a step", "step", i, "reason", why)
		}
		if ctx.Err() != nil {
			break
		}
		stepIdent := identityNow(cfg)
		g := l.gather(ctx, a, i, l.decideBy(a, i))
		ls, _, rows := l.merge(i, g) // the step's pending requests are its Summary.Pending
		why := ""
		switch {
		case a.State == StateAborted:
			why = a.Reason
		case ctx.Err() != nil:
		default:
			why = shardAbort(g, l.n.id.Shards)
			if why == "" {
				why = cfg.Abort.Check(ls.Summary, cfg.TTFTGate)
			}
			if why != "" {
				l.abort(&a, why)
			}
		}
		ls.Aborted, ls.AbortReason = why != "", why
		cut(&ls, g, l.n.id.Shards, ident, stepIdent, identityNow(cfg))
		steps = append(steps, ls)
		res.ShardSteps = append(res.ShardSteps, rows...)
		if !ls.Summary.Validity.Valid {
			log.Warn("fleet ladder step invalid: not used for capacity or knee", "step", i, "reasons", strings.Join(ls.Summary.Validity.Reasons(), "; "))
		}
		if c := ls.CutCause(); c != "" { // a deploy or restart: the fleet's ladder is partial
			res.Partial = c
			if c == cause.IdentityChanged {
				res.ChangedTo = ls.IdentityEnd
			}
			if a.State != StateAborted {
				l.abort(&a, ls.AbortReason)
			}
			break
		}
		if ls.Aborted || ctx.Err() != nil {
			break
		}
		if i == len(cfg.Steps) {
			a.State = StateDone
			break
		}
		if why := ladder.StopHere(steps, cfg); why != "" {
			res.Stopped = why
			a.State, a.Reason = StateStopped, why
			break
		}
		a.StepStarts = append(a.StepStarts, l.nextStart(a, i, g))
		a.Allowed = i + 1
		l.publish(a)
	}
	var err error
	if ctx.Err() != nil {
		err = ctx.Err()
		if a.State != StateAborted {
			l.abort(&a, "interrupted")
		}
	}
	l.publish(a)
	<-shareDone
	res.Result = ladder.Conclude(cfg, res.Result, steps, err != nil)
	res.AbortedAt = a.AbortedAt
	l.mu.Lock()
	l.last = &res
	l.mu.Unlock()
	if cfg.HistoryFile != "" {
		if herr := ladder.AppendJSON(cfg.HistoryFile, res); herr != nil {
			err = errors.Join(err, fmt.Errorf("%w: %w", ladder.ErrHistoryNotWritten, herr))
		}
	}
	return res, err
}

// nextStart is when step i+1 starts, decided after step i was gathered
// (g): as a lone prober's ladder goes on, ladder.gap after every shard's
// results are in (each shard's requests finished, the settle over) rather
// than after the whole settle the timetable keeps for the slowest request;
// at least AnnounceLead from now, so every shard reads it in time; and
// never later than the timetable. With a shard's results missing it is the
// timetable's start.
func (l *Ladder) nextStart(a Announcement, i int, g gathered) time.Time {
	latest := l.stepStart(a, i+1)
	if len(g.reports) < l.n.id.Shards {
		return latest
	}
	early := l.n.now().Add(max(l.cfg.Gap, AnnounceLead))
	if early.Before(latest) {
		return early
	}
	return latest
}

// shardAbort is why a shard stopped its share by its own abort rule (the
// first, by shard), or "".
func shardAbort(g gathered, shards int) string {
	for shard := range shards {
		if r, ok := g.reports[shard]; ok && r.AbortReason != "" && !strings.HasPrefix(r.AbortReason, "fleet: ") {
			return fmt.Sprintf("shard %d: %s", shard, r.AbortReason)
		}
	}
	return ""
}

// publish makes a the ladder's state (what the shards read).
func (l *Ladder) publish(a Announcement) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cp := a
	cp.Steps = append([]float64(nil), a.Steps...)
	cp.StepStarts = append([]time.Time(nil), a.StepStarts...)
	l.ann = &cp
	if s, ok := l.shares[a.ID]; ok {
		s.ann = cp
	}
	close(l.wake)
	l.wake = make(chan struct{})
}

// abort aborts a now, for why, and publishes it.
func (l *Ladder) abort(a *Announcement, why string) {
	at := l.n.now()
	a.State, a.Reason, a.AbortedAt = StateAborted, why, &at
	l.publish(*a)
}

// ownState is shard 0's view of its own ladder: always fresh.
func (l *Ladder) ownState(id string) stateFunc {
	return func() (Announcement, time.Time, bool, <-chan struct{}) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.ann == nil || l.ann.ID != id {
			return Announcement{}, l.n.now(), false, l.wake
		}
		return *l.ann, l.n.now(), true, l.wake
	}
}

// gather collects every shard's final results of step i until each is in
// or cannot come, or until deadline: everything it does (finding a shard
// among the peers, a DNS lookup included, and reading its report) ends by
// then, so the decision it feeds is published in time.
func (l *Ladder) gather(ctx context.Context, a Announcement, i int, deadline time.Time) gathered {
	ctx, cancel := context.WithTimeout(ctx, deadline.Sub(l.n.now())) // the node's clock, as deadline is
	defer cancel()
	g := gathered{reports: map[int]*StepReport{}, missing: map[int]string{}}
	final := map[int]bool{}
	for {
		var open []int
		for s := range l.n.id.Shards {
			if _, ok := g.reports[s]; !ok && !final[s] {
				open = append(open, s)
			}
		}
		if len(open) == 0 {
			return g
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, s := range open {
			wg.Go(func() {
				r, why, done := l.fetchReport(ctx, a, i, s, deadline)
				mu.Lock()
				defer mu.Unlock()
				if r != nil {
					g.reports[s] = r
					delete(g.missing, s)
					return
				}
				g.missing[s], final[s] = sanitizeReason(why), done // it may quote the shard's answer
			})
		}
		wg.Wait()
		if err := sleepUntil(ctx, l.n.now, minTime(l.n.now().Add(gatherEvery), deadline)); err != nil || !l.n.now().Before(deadline) {
			return g
		}
	}
}

// fetchReport reads shard s's results of step i (this shard's from its
// own store): the checked report, or why there is none and whether that
// is final.
func (l *Ladder) fetchReport(ctx context.Context, a Announcement, i, s int, deadline time.Time) (*StepReport, string, bool) {
	if s == l.n.id.Shard {
		r, why, retry := l.report(a.ID, i)
		if r == nil {
			return nil, why, !retry
		}
		cp := *r // checked like any shard's, on a copy (the handler may be serving r)
		cp.Causes = append([]verdict.InvalidCause(nil), r.Causes...)
		if err := l.checkReport(&cp, a.ID, i, s); err != nil {
			return nil, "results refused: " + err.Error(), true
		}
		return &cp, "", true
	}
	at, why := l.n.dir.locate(ctx, []int{s})
	u, ok := at[s]
	if !ok {
		return nil, why[s], false
	}
	var r StepReport
	err := getJSON(ctx, l.n.cli, fmt.Sprintf("%s%s/%s/steps/%d", u, PathLadders, a.ID, i), deadline.Sub(l.n.now()), MaxReportBytes, &r)
	var st errStatus
	switch {
	case errors.As(err, &st) && st.code == 409:
		return nil, st.msg, true
	case errors.As(err, &st):
		return nil, st.msg, false
	case err != nil:
		l.n.dir.forget(s)
		return nil, err.Error(), false
	}
	if err := l.checkReport(&r, a.ID, i, s); err != nil {
		return nil, "results refused: " + err.Error(), true
	}
	return &r, "", true
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// liveChecks waits for step i's window and, every CheckEvery while it
// runs, applies the abort rules (all but generator validity) to the
// shards' merged in-step counts, as one prober's runner does to its own;
// a shard that stopped its share by its own rule aborts the fleet's
// ladder. It returns why the ladder must stop, or "".
func (l *Ladder) liveChecks(ctx context.Context, a Announcement, i int) string {
	cfg := l.cfg
	start := l.stepStart(a, i)
	end := start.Add(cfg.StepDuration)
	if sleepUntil(ctx, l.n.now, start) != nil {
		return ""
	}
	t := time.NewTicker(CheckEvery)
	defer t.Stop()
	for l.n.now().Before(end) {
		select {
		case <-ctx.Done():
			return ""
		case <-t.C:
		}
		if why := l.checkLive(ctx, a, i); why != "" {
			return why
		}
	}
	return ""
}

// checkLive is one in-step check of step i, done within CheckEvery (a slow
// discovery of the peers must not hold the step's checks, nor its gather,
// past their time).
func (l *Ladder) checkLive(ctx context.Context, a Announcement, i int) string {
	ctx, cancel := context.WithTimeout(ctx, CheckEvery)
	defer cancel()
	cfg := l.cfg
	reps := l.gatherLive(ctx, a, i)
	var parts []stats.ShardSummary
	finished, judged, over, waiting := 0, 0, 0, 0
	for s := range l.n.id.Shards {
		r, ok := reps[s]
		if !ok {
			continue
		}
		if r.AbortReason != "" && !strings.HasPrefix(r.AbortReason, "fleet: ") {
			return fmt.Sprintf("shard %d: %s", s, r.AbortReason)
		}
		parts = append(parts, r.All)
		finished += r.Finished
		judged, over, waiting = judged+r.TTFTJudged, over+r.TTFTOver, waiting+r.TTFTWaiting
	}
	if cfg.MidStepMin <= 0 {
		return ""
	}
	if finished >= cfg.MidStepMin {
		sum, err := stats.Merge(stats.Config{Mode: ledger.ModeOpen, RequestedRate: cfg.Steps[i-1], Window: cfg.StepDuration, Validity: cfg.Validity}, parts)
		rules := cfg.Abort
		rules.OnGeneratorInvalid = false // the verdict needs the whole window
		if err == nil {
			if why := rules.Check(sum, cfg.TTFTGate); why != "" {
				return fmt.Sprintf("mid-step: %s (the fleet's %d shards merged)", why, l.n.id.Shards)
			}
		}
	}
	if why := ladder.TTFTInFlight(judged, over, waiting, cfg.MidStepMin, cfg.Abort.TTFTGateMultiple, cfg.TTFTGate); why != "" {
		return fmt.Sprintf("mid-step: %s (the fleet's %d shards merged)", why, l.n.id.Shards)
	}
	return ""
}

// gatherLive reads every reachable shard's step in progress (checked).
func (l *Ladder) gatherLive(ctx context.Context, a Announcement, i int) map[int]*LiveReport {
	out := map[int]*LiveReport{}
	if r, ok := l.live(a.ID); ok && r.Step == i {
		out[l.n.id.Shard] = r
	}
	var others []int
	for s := range l.n.id.Shards {
		if s != l.n.id.Shard {
			others = append(others, s)
		}
	}
	at, _ := l.n.dir.locate(ctx, others)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for s, u := range at {
		wg.Go(func() {
			var r LiveReport
			if err := getJSON(ctx, l.n.cli, fmt.Sprintf("%s%s/%s/live", u, PathLadders, a.ID), CheckEvery/2, 1<<20, &r); err != nil {
				return
			}
			if r.Ladder != a.ID || r.Shard != s || r.Step != i || r.All.Check() != nil || r.Finished < 0 || r.Planned < r.Finished ||
				r.TTFTJudged < r.TTFTOver || r.TTFTOver < r.TTFTWaiting || r.TTFTWaiting < 0 {
				return
			}
			r.AbortReason = sanitizeReason(r.AbortReason)
			mu.Lock()
			out[s] = &r
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}
