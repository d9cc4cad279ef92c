package stats

import (
	"errors"
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// ShardSummary is one cohort in mergeable form: what a fleet shard sends the
// coordinator for one ladder step (or one class of it). Counts are exact;
// TTFT, e2e and dispatch lag travel as Sketches (exact samples up to
// ExportExact). Merge sums ShardSummaries into the Summary one Accumulator would
// have made of all their records; the other distributions (inter-chunk,
// TPOT, TTFR, …) stay with each shard.
type ShardSummary struct {
	Planned         int `json:"planned"`
	Retries         int `json:"retries"`
	Attempts        int `json:"attempts"`
	Dispatched      int `json:"dispatched"`
	Unsent          int `json:"unsent"`
	FirstDispatched int `json:"first_dispatched"`
	FirstUnsent     int `json:"first_unsent"`
	Admitted        int `json:"admitted"`
	Completed       int `json:"ok"`
	Censored        int `json:"censored"`
	Rejected        int `json:"rejected"`
	Cancelled       int `json:"cancelled"`
	Good            int `json:"good"`
	InjectedCancels int `json:"injected_cancels"`
	// Pending counts arrivals still in flight when the part was taken
	// (Summary.Pending; in no other count).
	Pending int `json:"pending,omitempty"`
	// WindowNS is the cohort's arrival window when it was cut short
	// (Accumulator.SetWindow: an aborted step), in nanoseconds; 0 when it
	// ran its whole window.
	WindowNS int64 `json:"window_ns,omitempty"`
	// Outcomes counts attempts by outcome and reason.
	Outcomes map[ledger.Outcome]map[ledger.Reason]int `json:"outcomes"`
	// Gate misses of ok records (see GateMisses).
	MissTTFT     int `json:"miss_ttft"`
	MissTPOT     int `json:"miss_tpot"`
	MissE2E      int `json:"miss_e2e"`
	Unverifiable int `json:"unverifiable"`
	// The validity rule's evidence: attempts unsent at the in-flight cap
	// (and the first attempts among them), dispatches whose lag exceeded
	// LagLimitNS, the limit they were counted against, and those beyond
	// LagHardNS, the hard limit (ValidityConfig.HardLimit).
	ClientCap      int   `json:"client_cap"`
	FirstClientCap int   `json:"first_client_cap"`
	LagOver        int   `json:"lag_over"`
	LagLimitNS     int64 `json:"lag_limit_ns"`
	LagOverHard    int   `json:"lag_over_hard"`
	LagHardNS      int64 `json:"lag_hard_ns"`
	// LagCount counts the dispatches with a lag (what LagOver is out of),
	// with or without samples.
	LagCount int `json:"lag_count"`

	TTFTBoundary ledger.TTFTBoundary `json:"ttft_boundary,omitempty"`
	TTFT         quantile.Sketch     `json:"ttft"`
	E2E          quantile.Sketch     `json:"e2e"`
	DispatchLag  quantile.Sketch     `json:"dispatch_lag"`
	// Steady is the cohort's steady-state evidence (a ladder step's, with
	// samples); absent otherwise.
	Steady *ShardSteady `json:"steady,omitempty"`
}

// ShardSummary returns the cohort in mergeable form; without samples its Sketches
// are empty (counts only: enough for every abort rule but the TTFT p95).
func (a *Accumulator) ShardSummary(samples bool) ShardSummary {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := &a.s
	p := ShardSummary{
		Planned: s.Planned, Retries: s.Retries, Attempts: s.Attempts, Dispatched: s.Dispatched, Unsent: s.Unsent,
		FirstDispatched: s.FirstDispatched, FirstUnsent: s.FirstUnsent, Admitted: s.Admitted, Completed: s.Completed,
		Censored: s.Censored, Rejected: s.Rejected, Cancelled: s.Cancelled, Good: s.Good, InjectedCancels: s.InjectedCancels,
		Outcomes: map[ledger.Outcome]map[ledger.Reason]int{},
		MissTTFT: s.GateMisses.TTFT, MissTPOT: s.GateMisses.TPOT, MissE2E: s.GateMisses.E2E, Unverifiable: s.GateMisses.Unverifiable,
		ClientCap: a.clientCap, FirstClientCap: a.firstClientCap, LagOver: a.lagOver, LagLimitNS: int64(a.lagLimit),
		LagOverHard: a.lagOverHard, LagHardNS: int64(a.lagHard), LagCount: a.lagN,
		TTFTBoundary: s.TTFTBoundary, Pending: s.Pending,
	}
	if a.s.Window < a.window0 {
		p.WindowNS = int64(a.s.Window)
	}
	for o, m := range s.Outcomes.ByReason {
		p.Outcomes[o] = map[ledger.Reason]int{}
		for r, n := range m {
			p.Outcomes[o][r] = n
		}
	}
	if samples {
		p.TTFT, p.E2E, p.DispatchLag = a.ttft.Sketch(0), a.e2e.Sketch(0), a.lag.Sketch(0)
		if sv := a.steadyVerdict(); sv != nil {
			p.Steady = steadyPart(*sv)
		}
	}
	return p
}

// Check reports what makes p unmergeable: a negative count, counts that
// break the ledger's identities (attempts = planned + retries = dispatched
// + unsent; the outcomes add up to the attempts), an unknown outcome or
// reason, more of a kind than there are attempts, a bad sketch. A ShardSummary
// from another process is checked before it is merged.
func (p ShardSummary) Check() error {
	counts := []int{p.Planned, p.Retries, p.Attempts, p.Dispatched, p.Unsent, p.FirstDispatched, p.FirstUnsent,
		p.Admitted, p.Completed, p.Censored, p.Rejected, p.Cancelled, p.Good, p.InjectedCancels,
		p.MissTTFT, p.MissTPOT, p.MissE2E, p.Unverifiable, p.ClientCap, p.FirstClientCap, p.LagOver, p.LagOverHard, p.LagCount}
	for _, n := range counts {
		if n < 0 || n > p.Attempts {
			return fmt.Errorf("a count (%d) is negative or above the attempts (%d)", n, p.Attempts)
		}
	}
	switch {
	case p.Attempts != p.Planned+p.Retries:
		return fmt.Errorf("attempts %d ≠ planned %d + retries %d", p.Attempts, p.Planned, p.Retries)
	case p.Attempts != p.Dispatched+p.Unsent:
		return fmt.Errorf("attempts %d ≠ dispatched %d + unsent %d", p.Attempts, p.Dispatched, p.Unsent)
	case p.Planned != p.FirstDispatched+p.FirstUnsent:
		return fmt.Errorf("planned %d ≠ first dispatched %d + first unsent %d", p.Planned, p.FirstDispatched, p.FirstUnsent)
	case p.Good > p.Completed:
		return fmt.Errorf("good %d above ok %d", p.Good, p.Completed)
	case p.LagLimitNS <= 0:
		return fmt.Errorf("no dispatch-lag limit")
	case p.LagHardNS < p.LagLimitNS:
		return fmt.Errorf("dispatch-lag hard limit %s below the limit %s", time.Duration(p.LagHardNS), time.Duration(p.LagLimitNS))
	case p.LagOverHard > p.LagOver || p.LagOver > p.LagCount || p.LagCount > p.Dispatched:
		return fmt.Errorf("dispatch lags: %d beyond the hard limit, %d beyond the limit, of %d (%d dispatched)", p.LagOverHard, p.LagOver, p.LagCount, p.Dispatched)
	case p.Pending < 0 || p.Pending > 1<<30:
		return fmt.Errorf("pending %d", p.Pending)
	case p.WindowNS < 0:
		return fmt.Errorf("window %dns is negative", p.WindowNS)
	}
	if _, err := ledger.ParseTTFTBoundary(string(p.TTFTBoundary)); err != nil {
		return err
	}
	if p.Steady != nil {
		if err := p.Steady.check(p.Attempts + p.Pending); err != nil {
			return err
		}
	}
	sum := 0
	for o, m := range p.Outcomes {
		for r, n := range m {
			if err := ledger.Check(o, r); err != nil {
				return err
			}
			if n < 0 || n > p.Attempts {
				return fmt.Errorf("outcome %s/%s: count %d", o, r, n)
			}
			sum += n
		}
	}
	if sum != p.Attempts {
		return fmt.Errorf("outcomes add up to %d, not the attempts %d", sum, p.Attempts)
	}
	for _, s := range []struct {
		name string
		sk   quantile.Sketch
		max  int
	}{{"ttft", p.TTFT, p.Completed}, {"e2e", p.E2E, p.Completed}, {"dispatch_lag", p.DispatchLag, p.Dispatched}} {
		if err := s.sk.Check(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if s.sk.Count > s.max {
			return fmt.Errorf("%s: %d samples for %d requests", s.name, s.sk.Count, s.max)
		}
	}
	return nil
}

// Merge returns the Summary of the union of parts' cohorts, as one
// Accumulator with cfg would have made it of all their records: counts
// summed, TTFT, e2e and dispatch lag merged (exact while every part's are),
// and the validity rule applied to the summed evidence against cfg's
// requested rate and window (the host's health unknown). Each part is
// checked first (ShardSummary.Check), and all must have counted dispatch lags
// against the same limits as cfg.Validity (Limit and HardLimit).
//
// When a part's window was cut short (ShardSummary.WindowNS: its arrivals were
// stopped early), the merged window is the mean of the parts' windows (a
// part not cut short counting cfg.Window): the time the parts together
// offered their load, exact when they offered equal shares of the rate,
// as a fleet's shards do. A part's window longer than cfg.Window is an
// error.
func Merge(cfg Config, parts []ShardSummary) (Summary, error) { return merge(cfg, parts, nil) }

func merge(cfg Config, parts []ShardSummary, host *verdict.HostHealth) (Summary, error) {
	a := NewAccumulator(cfg)
	if host != nil {
		a.SetHost(*host)
	}
	var sum time.Duration
	cut := false
	for i, p := range parts {
		if err := p.Check(); err != nil {
			return Summary{}, fmt.Errorf("part %d: %w", i, err)
		}
		if time.Duration(p.LagLimitNS) != a.lagLimit || time.Duration(p.LagHardNS) != a.lagHard {
			return Summary{}, fmt.Errorf("part %d: dispatch lags counted against %s (hard %s), not %s (hard %s)", i,
				time.Duration(p.LagLimitNS), time.Duration(p.LagHardNS), a.lagLimit, a.lagHard)
		}
		w := cfg.Window
		if p.WindowNS > 0 && cfg.Window > 0 {
			if time.Duration(p.WindowNS) > cfg.Window {
				return Summary{}, fmt.Errorf("part %d: window %s longer than the cohort's %s", i, time.Duration(p.WindowNS), cfg.Window)
			}
			w, cut = time.Duration(p.WindowNS), true
		}
		sum += w
		if err := a.absorb(p); err != nil {
			return Summary{}, fmt.Errorf("part %d: %w", i, err)
		}
	}
	if cut {
		a.SetWindow(sum / time.Duration(len(parts)))
	}
	return a.Summary(), nil
}

func (a *Accumulator) absorb(p ShardSummary) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := &a.s
	s.Planned += p.Planned
	s.Retries += p.Retries
	s.Attempts += p.Attempts
	s.Dispatched += p.Dispatched
	s.Unsent += p.Unsent
	s.FirstDispatched += p.FirstDispatched
	s.FirstUnsent += p.FirstUnsent
	s.Admitted += p.Admitted
	s.Completed += p.Completed
	s.Censored += p.Censored
	s.Rejected += p.Rejected
	s.Cancelled += p.Cancelled
	s.Good += p.Good
	s.InjectedCancels += p.InjectedCancels
	s.Pending += p.Pending
	s.GateMisses.TTFT += p.MissTTFT
	s.GateMisses.TPOT += p.MissTPOT
	s.GateMisses.E2E += p.MissE2E
	s.GateMisses.Unverifiable += p.Unverifiable
	a.clientCap += p.ClientCap
	a.firstClientCap += p.FirstClientCap
	a.lagOver += p.LagOver
	a.lagOverHard += p.LagOverHard
	a.lagN += p.LagCount
	if p.TTFTBoundary != "" {
		s.TTFTBoundary = p.TTFTBoundary
	}
	a.absorbed++
	if p.Steady != nil {
		a.steadyParts = append(a.steadyParts, p.Steady)
	}
	for o, m := range p.Outcomes {
		for r, n := range m {
			if n == 0 {
				continue
			}
			s.Outcomes.ByOutcome[o] += n
			byR := s.Outcomes.ByReason[o]
			if byR == nil {
				byR = map[ledger.Reason]int{}
				s.Outcomes.ByReason[o] = byR
			}
			byR[r] += n
		}
	}
	return errors.Join(a.ttft.Merge(p.TTFT), a.e2e.Merge(p.E2E), a.lag.Merge(p.DispatchLag))
}

// MergeHost is Merge with the prober host's health over the cohort (a
// fleet step's: FleetHost): the one rule names a late merged generator's
// host cause from it, as a prober alone's verdict does.
func MergeHost(cfg Config, parts []ShardSummary, h verdict.HostHealth) (Summary, error) {
	return merge(cfg, parts, &h)
}
