package statuspage

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/budget"
	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/fleet"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/slo"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// Input is the daemon's view, what the page is built from: the daemon
// feeds it, Build lays it out.
type Input struct {
	Version string
	Started time.Time // when the daemon started
	Now     time.Time // when the view was taken
	// LadderSVG is the last ladder's curve (report.LadderSVG).
	LadderSVG string
	// Fleet is this prober's place in its fleet (zero: alone).
	Fleet fleet.Status
	// Host is the prober host's health over the live verdict's window.
	Host    verdict.HostHealth
	Targets []TargetInput // in any order: the page sorts them by name
}

// TargetInput is one target as the daemon knows it now, as typed facts:
// the page writes every word (card.go, words.go).
type TargetInput struct {
	Name, API, Model string // the configured name, API and model
	InFlight         int
	// Ladder is the ladder running now (nil: none).
	Ladder *LadderProgress
	// Queued is the ladder waiting its turn (nil: none waits).
	Queued *LadderQueued
	// Verdict is the live generator verdict (verdict.LiveValidity.Judge).
	Verdict verdict.Validity
	// Memory is what the page remembers of the target (its baseline
	// windows, ladders, identity); nil shows none.
	Memory *Memory
	// Last is the last ladder (nil before any).
	Last *ladder.Result
	// NextLadder is when the next timed ladder runs (zero: none timed).
	NextLadder time.Time
	// LastOutcome and LastReason are the last request's.
	LastOutcome ledger.Outcome
	LastReason  ledger.Reason
	// Held is the baseline planned during ladders, kept out of the SLO.
	Held Held
	// Budget is today's budget (nil: none set).
	Budget *budget.Remaining
	// Configured is what the configuration enables; Classes its classes.
	Configured Configured
	Classes    []ClassFacts
	// Regression, when set, is the capacity regression to show; nil
	// derives it from Memory's ladders (Memory.Regression).
	Regression *Regression
	// Labels are the target's constant labels (config labels:, file_sd
	// labels); the page cleans them again.
	Labels map[string]string
	// Failures are the last failed requests, newest first, every text
	// already cleaned by the one sanitiser (at most MaxFailures are shown).
	Failures []Failure
	// Answers are the answer checks' tallies (nil: none ran).
	Answers *Answers
	// Settle is the wait before a ladder for the target to settle (nil
	// when none).
	Settle *LadderSettle
}

// statusWindows are the windows of the status page's baseline figures.
var statusWindows = []struct {
	name string
	d    time.Duration
}{{"5 min", 5 * time.Minute}, {"60 min", time.Hour}}

// Build lays out the page from the daemon's view.
func Build(in Input) Status {
	page := slo.PageTiers()[0]
	st := Status{Version: in.Version, Started: in.Started, Now: in.Now, LadderSVG: in.LadderSVG, Fleet: fleetText(in.Fleet), Host: hostText(in.Host),
		Objectives: fmt.Sprintf("SLO state as the shipped alert rules judge it (objectives: availability %s, latency %s, correctness %s; the page tier fires at a burn rate > %g× over both %v and %v), from this daemon's own records; the alerts in Prometheus are authoritative.",
			pctText(slo.AvailabilityObjective), pctText(slo.LatencyObjective), pctText(slo.CorrectnessObjective), page.Factor, windowText(page.Long), windowText(page.Short))}
	for _, t := range in.Targets {
		st.Targets = append(st.Targets, buildTarget(in.Now, in.Started, in.Fleet.Identity, t))
	}
	// Worst first, then by name.
	sort.SliceStable(st.Targets, func(i, j int) bool {
		a, b := st.Targets[i], st.Targets[j]
		if ra, rb := stateRank(a.Target.State), stateRank(b.Target.State); ra != rb {
			return ra < rb
		}
		return a.Name < b.Name
	})
	st.Summary = summaryText(st.Targets)
	return st
}

// buildTarget lays out one target's card.
func buildTarget(now, started time.Time, id fleet.Identity, t TargetInput) TargetStatus {
	ts := TargetStatus{Name: t.Name, API: t.API, Model: t.Model, InFlight: t.InFlight,
		State: activityText(t), Capacity: "unknown: no ladder yet", Knee: "none"}
	if !t.Configured.Ladder {
		ts.LaddersOff, ts.Capacity, ts.Knee = true, "not measured: this target's ladders are off (ladder.enabled: false)", "-"
	}
	v := t.Verdict
	ts.Generator, ts.GeneratorValid = "valid: the prober keeps its schedule", v.Valid
	ts.Prober = ProberBadge{Valid: v.Valid}
	if !v.Valid {
		ts.Prober.Causes, ts.Prober.Evidence = badgeCauses(v.Causes, t.Name)
		var why, do []string
		for _, c := range v.Causes {
			why, do = append(why, c.Reason), append(do, c.Action)
		}
		ts.Generator, ts.GeneratorAdvice = "INVALID: "+strings.Join(why, "; "), strings.Join(do, "; ")
	}
	sd := t.Memory
	if sd == nil {
		sd = NewMemory()
	}
	m, ver, since, changes := sd.identity()
	ts.Identity = Identity{Model: m, Version: ver, Since: since, Changes: changes}
	for _, w := range statusWindows {
		rw := sd.rolling.Window(now, w.d)
		ts.Latency = append(ts.Latency, latencyRows(w.name, rw)...)
		_, a := sd.avail.window(now, w.d)
		ts.Availability = append(ts.Availability, AvailabilityRow{Window: w.name, Sent: a.Sent, Failed: a.Failed,
			Ratio: ratioText(a.Sent-a.Failed, a.Sent), DuringSent: a.DuringSent, DuringFailed: a.DuringFailed,
			DuringRatio: ratioText(a.DuringSent-a.DuringFailed, a.DuringSent)})
	}
	sort.SliceStable(ts.Latency, func(i, j int) bool { return ts.Latency[i].Figure < ts.Latency[j].Figure })
	var classes []ClassJudgement
	ts.Target, classes = judgeTarget(now, started, t, sd)
	ts.SLO = append(sloRows(classes, t.Classes), correctnessRows(t.Answers)...)
	var prevID IdentityOf
	for i, p := range sd.history() {
		cp := CapacityPoint{When: p.finished, Capacity: p.capacity,
			LowerBound: p.bound == ladderresult.BoundLower, None: p.step == 0, Aborted: p.aborted, Trigger: p.trigger, Partial: p.partial}
		if p.id != (IdentityOf{}) && (i == 0 || p.id != prevID) {
			cp.Version = strings.TrimSpace(p.id.Model + " " + p.id.Version)
		}
		prevID = p.id
		ts.CapacityHistory = append(ts.CapacityHistory, cp)
	}
	var notes []string
	if t.Last != nil {
		notes = lastLadder(&ts, *t.Last, t.NextLadder, now)
	}
	fleetRole(id, t.Ladder != nil, &ts)
	ts.Notes = strings.Join(notes, "; ")
	ts.LastOutcome = outcomeText(t.LastOutcome, t.LastReason)
	ts.DuringLadder = heldText(t.Held)
	ts.Budget = budgetText(t.Budget)
	ts.Failures = t.Failures
	if t.Answers != nil {
		ts.Checks = checkRows(t.Answers.Long)
	}
	ts.Buffered = sd.buffered.fact()
	ts.Path = bufferedText(ts.Buffered)
	if len(ts.Failures) > MaxFailures {
		ts.Failures = ts.Failures[:MaxFailures]
	}
	ts.Labels = labelsOf(t.Labels)
	ts.Row = summaryRow(&ts, classes, t.Classes)
	return ts
}

// JudgeTarget is a target's state as its card shows it (with its evidence
// and next step), for the daemon's state log: the same judgement, at the
// same moment, as the page's. started is when the daemon started.
func JudgeTarget(now, started time.Time, t TargetInput) TargetState {
	sd := t.Memory
	if sd == nil {
		sd = NewMemory()
	}
	st, _ := judgeTarget(now, started, t, sd)
	return st
}

func judgeTarget(now, started time.Time, t TargetInput, sd *Memory) (TargetState, []ClassJudgement) {
	_, classes := sd.Judge(now)
	reg := t.Regression
	if reg == nil {
		reg = sd.Regression(regressionFraction())
	}
	return judgeCard(judgeInput{now: now, started: started, t: t, classes: classes, regression: reg}), classes
}

// Failing reports whether a state is the target failing (DOWN, REFUSED,
// FAILING): what the failing and recovered log lines follow.
func Failing(state string) bool {
	return state == StateDown || state == StateRefused || state == StateFailing
}

// sloRows are the SLO rows of each class (the shipped alerts judge each
// class: a small class burning its budget beside a large healthy one
// pages), from its short (5 min) and long (60 min) windows, counted as the
// rules count them (slo.Availability); a target of one class names none.
func sloRows(classes []ClassJudgement, facts []ClassFacts) []SLORow {
	classes = append([]ClassJudgement(nil), classes...)
	sort.Slice(classes, func(i, j int) bool { return classes[i].class < classes[j].class })
	var rows []SLORow
	for _, c := range classes {
		s, l := c.short, c.long
		of := ""
		if len(classes) > 1 {
			of = ", class " + c.class
		}
		rows = append(rows, sloRow("availability (failed / sent)"+of, slo.AvailabilityObjective, s.Failed, s.Sent, l.Failed, l.Sent, slo.MinBadEvents))
		if !hasGate(facts, c.class) {
			rows = append(rows, SLORow{SLI: "latency" + of, Objective: "none", Short: "-", Long: "-", NoData: true,
				State: "no latency SLI: the class has no TTFT gate (gates.ttft)"})
			continue
		}
		rows = append(rows, sloRow("latency (TTFT within the class gate)"+of, slo.LatencyObjective, s.LatencyBad, s.LatencyEvents, l.LatencyBad, l.LatencyEvents, slo.MinBadEvents))
	}
	if len(rows) == 0 { // nothing recorded yet: the rows say no data
		rows = append(rows,
			sloRow("availability (failed / sent)", slo.AvailabilityObjective, 0, 0, 0, 0, slo.MinBadEvents),
			sloRow("latency (TTFT within the class gate)", slo.LatencyObjective, 0, 0, 0, 0, slo.MinBadEvents))
	}
	return rows
}

// lastLadder fills the last ladder's figures and returns its notes.
func lastLadder(ts *TargetStatus, res ladder.Result, next, now time.Time) []string {
	var notes []string
	ts.LastLadder = res.Finished
	if res.CapacityStep > 0 {
		ts.Capacity = CapacityText(res.Capacity, res.CapacityStep, res.CapacityBound)
		if res.CapacityBound == ladderresult.BoundLower {
			ts.Capacity += " (lower bound: no valid step above it failed)"
			ts.CapacityLowerBound = true
		}
	} else if proberAborted(res) {
		ts.Capacity = "not measured: " + abortText(res) + "; " + nextLadderText(next, now)
	} else if len(res.Steps) > 0 {
		ts.Capacity = "none: no valid step met the gates"
	}
	var per []string
	for _, c := range res.Classes {
		per = append(per, c.Class+" "+CapacityText(c.Capacity, c.CapacityStep, c.CapacityBound))
	}
	if len(per) > 0 {
		ts.Capacity += "; per class (its own offered rate): " + strings.Join(per, ", ")
	}
	if res.KneeStep > 0 {
		ts.Knee = durfmt.Rate(res.Knee) + " req/s"
	}
	for _, s := range res.Steps {
		if s.Server == nil {
			continue
		}
		ss := ServerStep{Step: s.Index, Rate: durfmt.Rate(s.Rate), Explanation: s.Server.Explanation,
			Unavailable: s.Server.Unavailable || s.Server.Partial}
		ss.Running, ss.Waiting, ss.KV = report.ServerCells(s.Server)
		if !s.Server.Unavailable && s.Server.Flavour == servermetrics.LlamaCPP {
			ts.LadderServerRunning, ts.LadderServerWaiting = report.ServerHeads([]report.ServerStep{{View: s.Server}})
		}
		if g := s.TTFTGap(); g != nil {
			ss.Gap = fmt.Sprintf("p50 %s, p95 %s", report.GapText(g.P50, g.P50AtMost, g.P50Range), report.GapText(g.P95, g.P95AtMost, g.P95Range))
		}
		ts.LadderServer = append(ts.LadderServer, ss)
	}
	if bad := InvalidSteps(res); bad != "" {
		notes = append(notes, "last ladder: invalid step(s) "+bad+", not used for capacity or knee")
	}
	if res.Aborted {
		notes = append(notes, "last ladder aborted: "+res.AbortReason+"; "+nextLadderText(next, now))
	}
	return notes
}

// latencyRows are one window's TTFT, inter-chunk and e2e rows.
func latencyRows(window string, w RollingWindow) []LatencyRow {
	row := func(fig string, p quantile.Percentiles) LatencyRow {
		r := LatencyRow{Figure: fig, Window: window, P50: "-", P99: "-", Count: p.Count}
		if p.Count > 0 {
			r.P50, r.P99 = durText(p.P50), durText(p.P99)
		}
		return r
	}
	return []LatencyRow{row("TTFT", w.TTFT), row("inter-chunk gap", w.InterChunk), row("e2e", w.E2E)}
}

// durText prints a latency at three significant digits (45.3ms, 1.23s).
func durText(d time.Duration) string { return durfmt.Format(d) }

func ratioText(good, planned int) string {
	if planned == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f %%", 100*float64(good)/float64(planned))
}

// windowText names a whole-minute window as the page's windows are named
// ("60 min", "5 min").
func windowText(d time.Duration) string { return fmt.Sprintf("%g min", d.Minutes()) }

func pctText(f float64) string { return fmt.Sprintf("%g %%", 100*f) }

// sloRow judges one SLI as the shipped rules' first page tier does (burn
// rate ≥ its factor over the long and short window, with at least minBad
// bad events in the long one), over the windows this daemon keeps (60 and 5
// minutes: the tier's own).
func sloRow(sli string, objective float64, badS, nS, badL, nL, minBad int) SLORow {
	budget := 1 - objective
	cell := func(bad, n int) string {
		if n == 0 {
			return "no events"
		}
		ratio := float64(bad) / float64(n)
		return fmt.Sprintf("%.2f %% bad, burn %.1f×", 100*ratio, ratio/budget)
	}
	row := SLORow{SLI: sli, Objective: "objective " + pctText(objective), Short: cell(badS, nS), Long: cell(badL, nL)}
	page := slo.PageTiers()[0]
	pageBurn := page.Factor
	switch {
	case nL == 0:
		row.State, row.NoData = "no data: no baseline events in the last 60 minutes", true
	case badL >= minBad && slo.Burning(page, objective, badS, nS, badL, nL):
		row.State, row.Burning = fmt.Sprintf("BURNING: the page tier (> %g× over %s and %s)", pageBurn, windowText(page.Long), windowText(page.Short)), true
	case float64(badL)/float64(nL)/budget > 1:
		row.State, row.Burning = "burning faster than the budget lasts (60 min), below the page tier", true
	default:
		row.State = "within budget"
	}
	return row
}

// InvalidSteps lists a ladder's invalid steps with their causes, e.g.
// "4 (host_starved)", for logs and the status page.
func InvalidSteps(res ladder.Result) string {
	var out []string
	for _, s := range res.Steps {
		if v := s.Summary.Validity; !v.Valid {
			out = append(out, fmt.Sprintf("%d (%s)", s.Index, strings.Join(v.CauseNames(), ", ")))
		}
	}
	return strings.Join(out, ", ")
}

// CapacityText formats a capacity for humans: "≥ X req/s" for a lower bound.
func CapacityText(rate float64, step int, bound ladderresult.Bound) string {
	switch {
	case step == 0:
		return "none"
	case bound == ladderresult.BoundLower:
		return "≥ " + durfmt.Rate(rate) + " req/s"
	default:
		return durfmt.Rate(rate) + " req/s"
	}
}

// fleetRole adds the prober's place in its fleet to a target's card
// (activity is the target's Activity).
func fleetRole(id fleet.Identity, laddering bool, ts *TargetStatus) {
	if !id.InFleet() {
		return
	}
	if id.Coordinator() {
		ts.State = fmt.Sprintf("fleet coordinator (shard 0 of %d): %s", id.Shards, ts.State)
		if laddering {
			ts.State += " (this shard's share of the fleet's step)"
		}
		if !strings.HasPrefix(ts.Capacity, "unknown") {
			ts.Capacity = fmt.Sprintf("fleet of %d: %s", id.Shards, ts.Capacity)
		}
		return
	}
	ts.State = fmt.Sprintf("fleet shard %s: %s", id, ts.State)
	if laddering {
		ts.State += " (this shard's share of the fleet's step)"
	}
	ts.Capacity, ts.Knee = "the fleet's, on shard 0", "the fleet's, on shard 0"
}

// fleetText is the status page's fleet line ("" for a prober alone).
func fleetText(st fleet.Status) string {
	if !st.Identity.InFleet() {
		return ""
	}
	if st.Identity.Coordinator() {
		return fmt.Sprintf("shard 0 of %d: this prober coordinates the fleet's ladders (gathers, merges and judges every shard's steps)", st.Identity.Shards)
	}
	where := st.Coordinator
	if where == "" {
		where = "not found"
	}
	return fmt.Sprintf("shard %d of %d; coordinator (shard 0): %s, its ladder state %s", st.Identity.Shard, st.Identity.Shards, where, st.CoordinatorState)
}

// hostText is the status page's line on the prober host: the evidence the
// generator's verdict judged, over the window it was read over.
func hostText(h verdict.HostHealth) string {
	if !h.Known {
		return "not measured yet"
	}
	return fmt.Sprintf("over the last %s: %s", durfmt.Format(h.Window.Round(time.Second)), h)
}
