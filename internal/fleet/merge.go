package fleet

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// maxReasonBytes bounds a reason read from a shard.
const maxReasonBytes = 512

// gathered is one step's reports by shard, and why each missing one is.
type gathered struct {
	reports map[int]*StepReport
	missing map[int]string
}

// checkReport validates a report read from shard for step i of ladder id:
// every byte from a peer is hostile until checked. It cleans its texts in
// place (the one sanitiser) and replaces what_to_do by this build's.
func (l *Ladder) checkReport(r *StepReport, id string, i, shard int) error {
	n := l.n.id.Shards
	want := l.n.id.Rate(l.cfg.Steps[i-1])
	switch {
	case r.Ladder != id || r.Step != i || r.Shard != shard || r.Shards != n:
		return fmt.Errorf("a report for ladder %q step %d shard %d/%d, not %s step %d shard %d/%d",
			sanitize.String(r.Ladder, 100), r.Step, r.Shard, r.Shards, id, i, shard, n)
	case r.Fingerprint != l.print:
		return fmt.Errorf("ladder fingerprint %q, not %s: the shard runs another ladder configuration", sanitize.String(r.Fingerprint, 32), l.print)
	case math.Abs(r.Rate-want) > 1e-9*math.Max(1, want):
		return fmt.Errorf("offered %g req/s, not its share %g", r.Rate, want)
	case r.Pending < 0 || r.Pending > 1<<30:
		return fmt.Errorf("pending %d", r.Pending)
	}
	if err := r.All.Check(); err != nil {
		return fmt.Errorf("counts: %w", err)
	}
	if lim, hard := l.cfg.Validity.Limit(), l.cfg.Validity.HardLimit(); time.Duration(r.All.LagLimitNS) != lim || time.Duration(r.All.LagHardNS) != hard {
		return fmt.Errorf("dispatch lags counted against %s (hard %s), not %s (hard %s)",
			time.Duration(r.All.LagLimitNS), time.Duration(r.All.LagHardNS), lim, hard)
	}
	var names []string
	for name := range r.Classes {
		names = append(names, name)
	}
	slices.Sort(names)
	var want2 []string
	for _, c := range l.cfg.Classes {
		want2 = append(want2, c.Name)
	}
	slices.Sort(want2)
	if !slices.Equal(names, want2) {
		return fmt.Errorf("classes %q, not %q", sanitize.String(fmt.Sprint(names), 200), want2)
	}
	planned, attempts := 0, 0
	for name, p := range r.Classes {
		if err := p.Check(); err != nil {
			return fmt.Errorf("class %s: %w", name, err)
		}
		if p.LagLimitNS != r.All.LagLimitNS || p.LagHardNS != r.All.LagHardNS { // it would not merge
			return fmt.Errorf("class %s: dispatch lags counted against %s, every class together against %s", name,
				time.Duration(p.LagLimitNS), time.Duration(r.All.LagLimitNS))
		}
		planned += p.Planned
		attempts += p.Attempts
	}
	if planned != r.All.Planned || attempts != r.All.Attempts {
		return fmt.Errorf("the classes hold %d planned / %d attempts, every class together %d / %d", planned, attempts, r.All.Planned, r.All.Attempts)
	}
	if r.Valid != (len(r.Causes) == 0) {
		return errors.New("a verdict whose validity disagrees with its causes")
	}
	for k := range r.Causes {
		c := &r.Causes[k]
		// a shard's own verdict: a generator or a step cause, never a fleet one
		if e, ok := cause.Lookup(c.Cause); !ok || e.Kind == cause.KindFleet {
			return fmt.Errorf("unknown invalid cause %q", sanitize.String(string(c.Cause), 40))
		}
		c.Reason = sanitize.String(c.Reason, maxReasonBytes)
		c.Action = c.Cause.Action()
		c.HostCaused = false // the coordinator's own mark, for shard_invalid
	}
	r.AbortReason = sanitize.String(r.AbortReason, maxReasonBytes)
	r.Target = l.cfg.Target
	if r.Host != nil {
		h := *r.Host
		if err := h.Check(); err != nil {
			return err
		}
		r.Host = nil
		if h.Known {
			h.Cgroup = sanitize.String(h.Cgroup, maxCgroupBytes)
			h.Source = fmt.Sprintf("shard %d", shard) // the coordinator's own name for it
			r.Host = &h
		}
	}
	return nil
}

// maxCgroupBytes bounds a cgroup path read from a shard.
const maxCgroupBytes = 200

// validity is a checked report's own generator verdict.
func (r *StepReport) validity() verdict.Validity {
	return verdict.Validity{Valid: r.Valid, Causes: r.Causes}
}

// merge makes step i of the fleet from the shards' checked reports: the
// counts summed and the latency sketches merged (stats.Merge) at the
// fleet's rate, every class together and each class, invalid when any
// shard's share is missing or its own generator was invalid
// (verdict.FleetValidity). It returns the step, the requests its shards left
// pending, and each shard's row.
func (l *Ladder) merge(i int, g gathered) (ladderresult.LadderStep, int, []ShardStep) {
	cfg := l.cfg
	rate := cfg.Steps[i-1]
	var (
		parts    []stats.ShardSummary
		verdicts []verdict.ShardVerdict
		rows     []ShardStep
		hosts    []verdict.HostHealth
		pending  int
	)
	for shard := range l.n.id.Shards {
		row := ShardStep{Step: i, Shard: shard, Rate: l.n.id.Rate(rate)}
		r, ok := g.reports[shard]
		if !ok {
			why := g.missing[shard]
			if why == "" {
				why = "no answer"
			}
			row.Missing = why
			verdicts = append(verdicts, verdict.ShardVerdict{Shard: shard, Missing: why})
			rows = append(rows, row)
			continue
		}
		parts = append(parts, r.All)
		verdicts = append(verdicts, verdict.ShardVerdict{Shard: shard, Validity: r.validity()})
		pending += r.Pending
		row.Planned, row.Dispatched, row.OK, row.Good, row.Pending = r.All.Planned, r.All.Dispatched, r.All.Completed, r.All.Good, r.Pending
		row.Valid, row.AbortReason = r.Valid, r.AbortReason
		for _, c := range r.Causes {
			row.InvalidCauses = append(row.InvalidCauses, string(c.Cause))
		}
		if r.Host != nil {
			hosts = append(hosts, *r.Host)
			row.Host = r.Host.String()
		}
		rows = append(rows, row)
	}
	gates := map[string]stats.Gates{}
	for _, c := range cfg.Classes {
		gates[c.Name] = c.Gates
	}
	shares := ladder.Weights(cfg.Classes).Split(rate)
	scfg := stats.Config{Mode: ledger.ModeOpen, RequestedRate: rate, Window: cfg.StepDuration, ClassGates: gates, Validity: cfg.Validity}
	// The shards' host evidence: the most starved shard's, named, judges a
	// late merged generator as a prober alone's host would.
	host := verdict.FleetHost(cfg.Validity, hosts)
	sum, err := stats.MergeHost(scfg, parts, host)
	if err != nil { // every part was checked: a limit differs (the fingerprint holds it)
		sum, _ = stats.Merge(scfg, nil)
		verdicts = append(verdicts, verdict.ShardVerdict{Shard: -1, Missing: sanitizeReason("the shards' results do not merge: " + err.Error())})
	}
	var classes []ladderresult.ClassStep
	for ci, c := range cfg.Classes {
		var cparts []stats.ShardSummary
		for shard := range l.n.id.Shards {
			if r, ok := g.reports[shard]; ok {
				cparts = append(cparts, r.Classes[c.Name])
			}
		}
		crate := shares[ci]
		ccfg := stats.Config{Mode: ledger.ModeOpen, RequestedRate: crate, Window: cfg.StepDuration, Gates: c.Gates, Validity: cfg.Validity}
		cs, err := stats.Merge(ccfg, cparts)
		if err != nil { // every part was checked (checkReport): a class without figures makes the step invalid, never zeros as if measured
			cs, _ = stats.Merge(ccfg, nil)
			verdicts = append(verdicts, verdict.ShardVerdict{Shard: -1,
				Missing: sanitizeReason(fmt.Sprintf("class %s: the shards' results do not merge: %v", c.Name, err))})
		}
		classes = append(classes, ladderresult.ClassStep{Class: c.Name, Rate: crate, Summary: cs})
	}
	sum.Validity = verdict.FleetValidity(sum.Validity, verdicts)
	for k := range classes {
		classes[k].Summary.Validity = sum.Validity // one fleet generator: the step's verdict is every class's
		classes[k].Summary.Steady = sum.Steady     // one target, one queue: the step's saturation is every class's
	}
	return ladderresult.LadderStep{Index: i, Rate: rate, Summary: sum, Classes: classes}, pending, rows
}
