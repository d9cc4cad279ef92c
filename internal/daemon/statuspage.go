package daemon

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/admin"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/slo"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// statusWindows are the windows of the status page's baseline figures.
var statusWindows = []struct {
	name string
	d    time.Duration
}{{"5 min", 5 * time.Minute}, {"60 min", time.Hour}}

// status is the status page's view.
func (d *Daemon) status() admin.Status {
	host := d.host.Recent()
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	page := slo.PageTiers()[0]
	st := admin.Status{Version: d.opts.Build.Version, Started: d.start, Now: now, LadderSVG: d.lastSVG, Fleet: d.fleetText(), Host: hostText(host),
		Objectives: fmt.Sprintf("SLO state as the shipped alert rules judge it (objectives: availability %s, latency %s; the page tier fires at a burn rate > %g× over both %v and %v), from this daemon's own records; the alerts in Prometheus are authoritative.",
			pctText(slo.AvailabilityObjective), pctText(slo.LatencyObjective), page.Factor, windowText(page.Long), windowText(page.Short))}
	names := make([]string, 0, len(d.targets))
	for n := range d.targets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r := d.targets[n]
		inflight, _ := r.state.flight.snapshot()
		ts := admin.TargetStatus{Name: n, API: r.cfg.API, Model: r.cfg.Model, InFlight: inflight,
			State: r.stateText(), Capacity: "unknown: no ladder yet", Knee: "none"}
		v := r.state.validity.Judge(now, host)
		ts.Generator, ts.GeneratorValid = "valid: the prober keeps its schedule", v.Valid
		ts.Prober = admin.ProberBadge{Valid: v.Valid}
		if !v.Valid {
			ts.Prober.Causes, ts.Prober.Evidence = badgeCauses(v.Causes, n)
			ts.Generator = "INVALID: " + strings.Join(v.Reasons(), "; ")
			var do []string
			for _, c := range v.Causes {
				do = append(do, c.Action)
			}
			ts.GeneratorAdvice = strings.Join(do, "; ")
		}
		sd := r.state.status
		m, ver, since, changes := sd.identity()
		ts.Identity = admin.Identity{Model: m, Version: ver, Since: since, Changes: changes}
		for _, w := range statusWindows {
			rw := sd.rolling.Window(now, w.d)
			ts.Latency = append(ts.Latency, latencyRows(w.name, rw)...)
			_, a := sd.avail.window(now, w.d)
			ts.Availability = append(ts.Availability, admin.AvailabilityRow{Window: w.name, Sent: a.Sent, Failed: a.Failed,
				Ratio: ratioText(a.Sent-a.Failed, a.Sent), DuringSent: a.DuringSent, DuringFailed: a.DuringFailed,
				DuringRatio: ratioText(a.DuringSent-a.DuringFailed, a.DuringSent)})
		}
		sort.SliceStable(ts.Latency, func(i, j int) bool { return ts.Latency[i].Figure < ts.Latency[j].Figure })
		state, classes := sd.judge(now)
		ts.Target = admin.TargetState{State: string(state), Next: stateNext(state)}
		if len(classes) > 0 {
			ts.Target.Figures = stateFigures(classes[0])
		}
		ts.SLO = sloRows(classes)
		for _, p := range sd.history() {
			ts.CapacityHistory = append(ts.CapacityHistory, admin.CapacityPoint{When: p.finished, Capacity: p.capacity,
				LowerBound: p.bound == stats.BoundLower, None: p.step == 0, Aborted: p.aborted, Trigger: p.trigger})
		}
		var notes []string
		if res, ok := d.last[n]; ok {
			notes = lastLadder(&ts, res)
		}
		d.fleetStatus(r, &ts)
		ts.Notes = strings.Join(notes, "; ")
		ts.LastOutcome = r.lastOutcome()
		ts.DuringLadder = r.duringText(d.start, d.led.Now())
		ts.Budget = r.budgetText()
		ts.Failures = d.failures(n, r.client.Redactor())
		st.Targets = append(st.Targets, ts)
	}
	return st
}

// sloRows are the SLO rows of each class (the shipped alerts judge each
// class: a small class burning its budget beside a large healthy one
// pages), from its short (5 min) and long (60 min) windows, counted as the
// rules count them (slo.Availability); a target of one class names none.
func sloRows(classes []classJudgement) []admin.SLORow {
	classes = append([]classJudgement(nil), classes...)
	sort.Slice(classes, func(i, j int) bool { return classes[i].class < classes[j].class })
	var rows []admin.SLORow
	for _, c := range classes {
		s, l := c.short, c.long
		of := ""
		if len(classes) > 1 {
			of = ", class " + c.class
		}
		rows = append(rows,
			sloRow("availability (failed / sent)"+of, slo.AvailabilityObjective, s.Failed, s.Sent, l.Failed, l.Sent, slo.MinBadEvents),
			sloRow("latency (TTFT within the class gate)"+of, slo.LatencyObjective, s.LatencyBad, s.LatencyEvents, l.LatencyBad, l.LatencyEvents, slo.MinBadEvents))
	}
	if len(rows) == 0 { // nothing recorded yet: the rows say no data
		rows = append(rows,
			sloRow("availability (failed / sent)", slo.AvailabilityObjective, 0, 0, 0, 0, slo.MinBadEvents),
			sloRow("latency (TTFT within the class gate)", slo.LatencyObjective, 0, 0, 0, 0, slo.MinBadEvents))
	}
	return rows
}

// lastLadder fills the last ladder's figures and returns its notes.
func lastLadder(ts *admin.TargetStatus, res ladder.Result) []string {
	var notes []string
	ts.LastLadder = res.Finished
	if res.CapacityStep > 0 {
		ts.Capacity = capacityText(res.Capacity, res.CapacityStep, res.CapacityBound)
		if res.CapacityBound == stats.BoundLower {
			ts.Capacity += " (lower bound: no valid step above it failed)"
			ts.CapacityLowerBound = true
		}
	} else if len(res.Steps) > 0 {
		ts.Capacity = "none: no valid step met the gates"
	}
	var per []string
	for _, c := range res.Classes {
		per = append(per, c.Class+" "+capacityText(c.Capacity, c.CapacityStep, c.CapacityBound))
	}
	if len(per) > 0 {
		ts.Capacity += "; per class (its own offered rate): " + strings.Join(per, ", ")
	}
	if res.KneeStep > 0 {
		ts.Knee = stats.FormatRate(res.Knee) + " req/s"
	}
	for _, s := range res.Steps {
		if s.Server == nil {
			continue
		}
		ss := admin.ServerStep{Step: s.Index, Rate: stats.FormatRate(s.Rate), Explanation: s.Server.Explanation,
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
	if bad := invalidSteps(res); bad != "" {
		notes = append(notes, "last ladder: invalid step(s) "+bad+", not used for capacity or knee")
	}
	if res.Aborted {
		notes = append(notes, "last ladder aborted: "+res.AbortReason)
	}
	return notes
}

// latencyRows are one window's TTFT, inter-chunk and e2e rows.
func latencyRows(window string, w stats.RollingWindow) []admin.LatencyRow {
	row := func(fig string, p stats.Percentiles) admin.LatencyRow {
		r := admin.LatencyRow{Figure: fig, Window: window, P50: "-", P99: "-", Count: p.Count}
		if p.Count > 0 {
			r.P50, r.P99 = durText(p.P50), durText(p.P99)
		}
		return r
	}
	return []admin.LatencyRow{row("TTFT", w.TTFT), row("inter-chunk gap", w.InterChunk), row("e2e", w.E2E)}
}

// durText prints a latency at three significant digits (45.3ms, 1.23s).
func durText(d time.Duration) string { return servermetrics.Seconds(d.Seconds()) }

func ratioText(good, planned int) string {
	if planned == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f %%", 100*float64(good)/float64(planned))
}

// windowText writes a whole-minute window as 1h, 5m, 30m.
func windowText(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimSuffix(d.String(), "0s"), "0m")
}

func pctText(f float64) string { return fmt.Sprintf("%g %%", 100*f) }

// sloRow judges one SLI as the shipped rules' first page tier does (burn
// rate ≥ its factor over the long and short window, with at least minBad
// bad events in the long one), over the windows this daemon keeps (60 and 5
// minutes: the tier's own).
func sloRow(sli string, objective float64, badS, nS, badL, nL, minBad int) admin.SLORow {
	budget := 1 - objective
	cell := func(bad, n int) string {
		if n == 0 {
			return "no events"
		}
		ratio := float64(bad) / float64(n)
		return fmt.Sprintf("%.2f %% bad, burn %.1f×", 100*ratio, ratio/budget)
	}
	row := admin.SLORow{SLI: sli, Objective: "objective " + pctText(objective), Short: cell(badS, nS), Long: cell(badL, nL)}
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

// failures are the target's last failed requests from the ring, newest
// first, every text cleaned again by the one rule.
func (d *Daemon) failures(target string, red *sanitize.Redactor) []admin.Failure {
	if d.ring == nil {
		return nil
	}
	recs := d.ring.Target(target).Failures
	var out []admin.Failure
	for i := len(recs) - 1; i >= 0 && len(out) < maxFailuresShown; i-- {
		rec := recs[i]
		at := rec.End
		if at == 0 {
			at = rec.Planned
		}
		out = append(out, admin.Failure{When: d.start.Add(at), Traffic: string(rec.Traffic), Class: red.String(rec.Class, 64),
			Outcome: string(rec.Outcome), Reason: string(rec.Reason), Status: rec.Status, Error: red.String(rec.Error, ledger.MaxErrorBytes)})
	}
	return out
}

// ladderServerLog is the per-step server explanations of a ladder for its
// end log line ("" without server views).
func ladderServerLog(res ladder.Result) string {
	var parts []string
	for _, s := range res.Steps {
		if s.Server != nil {
			parts = append(parts, fmt.Sprintf("step %d (%s req/s): %s", s.Index, stats.FormatRate(s.Rate), s.Server.Explanation))
		}
	}
	return strings.Join(parts, " | ")
}
