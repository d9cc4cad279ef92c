package daemon

import (
	"bytes"
	"net/http"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/admin"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/statuspage"
	"github.com/llmprobe/llmprobe/internal/telemetry"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// maxTurnTargets is how many targets a tick refreshes and judges at most:
// up to it, every target every tick (a second); beyond it, each target in
// its turn, every ⌈targets / maxTurnTargets⌉ ticks, so the per-second work
// of the gauges and the state log stays bounded whatever the number of
// targets (docs/scale.md). A state or a generator verdict is then logged,
// and its gauges refreshed, up to that many seconds late; the live
// verdict, held for a window (a minute), loses no flip.
const maxTurnTargets = 250

// inTurn reports whether it is r's turn at tick of a daemon of count
// targets (by its index in the configuration).
func inTurn(r *targetRun, tick uint64, count int) bool {
	every := uint64((count + maxTurnTargets - 1) / maxTurnTargets)
	return every <= 1 || uint64(r.index)%every == tick%every
}

// refreshGauges publishes what only the running daemon knows: every
// target's live gauges (in flight, generator verdict, budget), at each
// scrape.
func (d *Daemon) refreshGauges() { d.refreshTargets(false) }

// refreshTargets refreshes every target's gauges, or with turns only the
// targets whose turn it is (inTurn): the run loop's tick.
func (d *Daemon) refreshTargets(turns bool) {
	d.mu.Lock()
	runs := make([]*targetRun, 0, len(d.targets))
	for _, r := range d.targets {
		runs = append(runs, r)
	}
	d.mu.Unlock()
	now := d.led.Now()
	host := d.host.Recent()
	tick := d.ticks.Load()
	for _, r := range runs {
		if turns && !inTurn(r, tick, len(runs)) {
			continue
		}
		n, oldest := r.state.flight.snapshot()
		age := time.Duration(0)
		if n > 0 {
			age = now - oldest
		}
		d.rec.SetInFlight(r.name, n, age)
		wall := d.now()
		v := r.state.validity.Judge(wall, host)
		d.rec.SetGeneratorValid(r.name, v, r.state.validity.MaxLag(wall))
		d.logVerdict(r)
		if r.budget != nil {
			rem := r.budget.Remaining()
			tok, req := int64(-1), int64(-1)
			if rem.TokensLimited {
				tok = rem.Tokens
			}
			if rem.RequestsLimited {
				req = rem.Requests
			}
			d.rec.SetBudget(r.name, tok, req)
		} else {
			d.rec.SetBudget(r.name, -1, -1) // unlimited (a reload may have removed the budget)
		}
	}
}

// ladderDone publishes a finished ladder.
func (d *Daemon) ladderDone(r *targetRun, res ladder.Result) {
	var svg bytes.Buffer
	if err := report.LadderSVG(&svg, res); err != nil {
		d.log.Warn("ladder curve", "target", r.name, "err", err)
	}
	r.state.status.AddLadder(res)
	d.mu.Lock()
	d.last[r.name] = res
	if svg.Len() > 0 {
		d.lastSVG = svg.String()
	}
	d.mu.Unlock()
	// The identity the capacity belongs to, beside it: a ladder a deploy
	// or restart cut is complete="false" (a lower bound of the old one),
	// and so is one that judged nothing (no valid step with arrivals: its
	// absent capacity is no finding, and LLMProbeCapacityLost skips it).
	d.rec.SetLadderIdentity(r.name, res.Identity.Model, res.Identity.Version, res.Complete() && res.Judged())
	// Each class's figures are its own: its records, its gates, its
	// offered rate (step rate × weight share); never the target-wide
	// figures repeated under a class label.
	for _, c := range r.classes {
		v := ladderresult.ClassVerdict{Class: c.Name, Verdict: res.Verdict} // a single class is the whole ladder
		for _, cr := range res.Classes {
			if cr.Class == c.Name {
				v = cr
			}
		}
		steps := make([]telemetry.LadderStep, 0, len(res.Steps))
		for _, s := range res.Steps {
			cs, ok := s.Class(c.Name)
			if !ok {
				continue
			}
			steps = append(steps, telemetry.LadderStep{Step: s.Index, OfferedRate: cs.Rate, TTFTP95: cs.Summary.TTFT.P95,
				Goodput: cs.Summary.GoodputPerSecond, Saturated: saturatedGauge(s.Summary.Steady)})
		}
		// No qualifying step / no knee is an absent series, never a 0 req/s figure.
		capacity, knee := v.Capacity, v.Knee
		if v.CapacityStep == 0 {
			capacity = -1
		}
		if v.KneeStep == 0 {
			knee = -1
		}
		d.rec.SetCapacity(r.name, c.Name, capacity, v.CapacityBound, knee)
		d.rec.SetLadderSteps(r.name, c.Name, res.Finished, steps)
	}
}

// logVerdict logs each flip of a target's live generator verdict once
// (verdict.LiveValidity keeps them, whoever judged): a warning with its
// causes, reasons and what to do when it turns invalid, the clean window
// that ended it when it turns valid again.
func (d *Daemon) logVerdict(r *targetRun) {
	for _, f := range r.state.validity.TakeFlips() {
		if f.Valid {
			d.log.Info("generator valid again: the prober keeps its schedule", "target", r.name, "cause", f.Why)
			continue
		}
		var names, do []string
		for _, c := range f.Causes {
			names = append(names, string(c.Cause))
			do = append(do, c.Action)
		}
		d.log.Warn("generator invalid: figures may describe the prober, not the target", "target", r.name,
			"cause", strings.Join(names, ","), "reason", f.Why, "what_to_do", strings.Join(do, "; "))
	}
}

// effectiveConfig is /config's view (redacted again by admin).
func (d *Daemon) effectiveConfig() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg.Redacted()
}

// handler is the admin HTTP handler.
func (d *Daemon) handler() http.Handler {
	return d.withFleet(admin.Handler(admin.Options{
		Gatherer: telemetry.RefreshingGatherer(d.rec.Registry(), d.refreshGauges), Registerer: d.rec.Registry(), Ready: d.ready.Load, Ring: d.ring,
		Config: d.effectiveConfig, Status: statuspage.Pages(d.status, d.statusOf, d.log), Logger: d.log, Probe: d.probe, Reload: d.lifecycleReload(),
	}))
}

// saturatedGauge is a step's llmprobe_ladder_step_saturated value: 1
// saturated, 0 steady, -1 not judged (no series).
func saturatedGauge(s *verdict.Steady) int {
	switch {
	case s == nil || !s.Judged:
		return -1
	case s.Saturated:
		return 1
	}
	return 0
}
