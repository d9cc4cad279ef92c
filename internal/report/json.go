package report

import (
	"io"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// The JSON shapes of the figures are stats' (shared with the ladder
// result's schema, stats/ladderjson.go); these are their names here.
type (
	Dist         = ladderresult.DistJSON
	GatesJSON    = ladderresult.GatesJSON
	HostJSON     = ladderresult.HostJSON
	ThrottleJSON = ladderresult.ThrottleJSON
)

// Goodput is the good count and its rate over the window.
type Goodput struct {
	Count     int     `json:"count"`
	PerSecond float64 `json:"per_second"`
	Fraction  float64 `json:"fraction"` // good / (planned − injected cancellations)
}

// GateMisses counts ok requests that missed each gate.
type GateMisses struct {
	TTFT             int `json:"ttft"`
	TPOT             int `json:"tpot"`
	E2E              int `json:"e2e"`
	TPOTUnverifiable int `json:"tpot_unverifiable"`
}

// CauseJSON is one cause of an invalid generator verdict: its name (a
// closed set: internal/cause's table),
// the reason with its figures, and what to do.
type CauseJSON struct {
	Cause    string `json:"cause"`
	Reason   string `json:"reason"`
	WhatToDo string `json:"what_to_do"`
}

func causesJSON(v verdict.Validity) []CauseJSON {
	out := []CauseJSON{}
	for _, c := range v.Causes {
		out = append(out, CauseJSON{Cause: string(c.Cause), Reason: c.Reason, WhatToDo: c.Action})
	}
	return out
}

// Probe is the JSON object `llmprobe probe --json` prints.
type Probe struct {
	// Verdict is the run's verdict against its gates and the exit status
	// it maps to (RunVerdict): the same the text and HTML reports lead
	// with. Absent when the report was made without one.
	Verdict *VerdictJSON `json:"verdict,omitempty"`
	// RequestPath is the path the requests were sent to (sanitised), named
	// because a 404 (not_found) is often a wrong path.
	RequestPath string `json:"request_path,omitempty"`
	Mode        string `json:"mode"` // open | closed
	// Valid is the generator-validity verdict: the prober kept its
	// schedule, so the figures measure the target. It says nothing about
	// whether the target is healthy.
	Valid          bool        `json:"valid"`
	InvalidReasons []string    `json:"invalid_reasons"`
	InvalidCauses  []CauseJSON `json:"invalid_causes"`
	Host           *HostJSON   `json:"host,omitempty"` // the prober host's health over the window
	Notes          []string    `json:"notes"`

	// Planned counts arrivals (first attempts); Retries their further
	// attempts; Attempts = Planned + Retries = Dispatched + Unsent.
	// FirstDispatched + FirstUnsent = Planned.
	Planned         int `json:"planned"`
	Retries         int `json:"retries"`
	Attempts        int `json:"attempts"`
	Dispatched      int `json:"dispatched"`       // attempts sent, retries included
	Unsent          int `json:"unsent"`           // attempts never sent, retries included
	FirstDispatched int `json:"first_dispatched"` // first attempts sent: the offered load
	FirstUnsent     int `json:"first_unsent"`     // first attempts never sent
	// Admitted counts attempts the target took: sent, not rejected
	// (429/503), not a transport error before response headers, not a
	// connect timeout.
	Admitted  int `json:"admitted"`
	Completed int `json:"completed"`
	Censored  int `json:"censored"`
	Rejected  int `json:"rejected"`
	Cancelled int `json:"cancelled"`
	// InjectedCancels are left out of completed_fraction and goodput.fraction.
	InjectedCancels int `json:"injected_cancels"`
	OutsideWindow   int `json:"outside_window"`
	// Replayed counts attempts sent again on a new connection after a
	// keep-alive race (records with replays).
	Replayed int `json:"replayed"`
	// Buffered counts ok streams an intermediary held and released in one
	// burst (ledger.BufferedVerdict); absent when none.
	Buffered int `json:"buffered,omitempty"`

	Outcomes map[string]int            `json:"outcomes"` // every outcome of the closed set, zeros included
	Reasons  map[string]map[string]int `json:"reasons"`  // outcome → reason → count, seen reasons only

	RequestedRate     float64 `json:"requested_rate"`
	AchievedRate      float64 `json:"achieved_rate"` // first_dispatched / window_seconds (offered load)
	WindowSeconds     float64 `json:"window_seconds"`
	AcceptedFraction  float64 `json:"accepted_fraction"`  // admitted / dispatched
	CompletedFraction float64 `json:"completed_fraction"` // completed / (admitted − injected_cancels)

	TTFT                 Dist `json:"ttft"`
	TTFTFromDispatch     Dist `json:"ttft_from_dispatch"`
	TTFR                 Dist `json:"ttfr"`
	InterChunk           Dist `json:"inter_chunk"`
	InterTokenDerived    Dist `json:"inter_token_derived"`
	TPOT                 Dist `json:"tpot"`
	E2E                  Dist `json:"e2e"`
	ArrivalTTFT          Dist `json:"arrival_ttft"` // from the arrival's first planned send
	ArrivalE2E           Dist `json:"arrival_e2e"`  // from the arrival's first planned send
	DispatchLag          Dist `json:"dispatch_lag"`
	RejectedResponseTime Dist `json:"rejected_response_time"`
	CensoredAge          Dist `json:"censored_age"`

	Goodput    Goodput           `json:"goodput"`
	Gates      GatesJSON         `json:"gates"`
	GateMisses GateMisses        `json:"gate_misses"`
	Boundaries map[string]string `json:"boundaries"`
	// Server is the target's own view of the run (--server-metrics) and
	// TTFTGap the client's TTFT p50/p95 minus the server's (GapNote).
	Server  *servermetrics.View    `json:"server,omitempty"`
	TTFTGap *servermetrics.TTFTGap `json:"ttft_gap,omitempty"`
	// MatchedGaps are the client − server gaps matched request by request
	// from the server's own timings (MatchedGapNote); absent without them.
	MatchedGaps *MatchedGaps `json:"matched_gaps,omitempty"`
	// PrefixCache is each shared-prefix class against its cold twin
	// (PrefixNote); absent without shared-prefix classes.
	PrefixCache []PrefixJSON `json:"prefix_cache,omitempty"`
	// Turns are a session class's figures by turn index; absent without
	// sessions.
	Turns []TurnJSON `json:"turns,omitempty"`
	// Checks are the answer checks' results (probe --checks), a row per
	// configured check; absent without checks.
	Checks []CheckRow `json:"checks,omitempty"`
}

// DistOf converts percentiles to seconds.
func DistOf(p quantile.Percentiles) Dist { return ladderresult.DistJSONOf(p) }

// ProbeOf converts a summary to its JSON shape.
func ProbeOf(s stats.Summary) Probe {
	mode := string(s.Mode)
	if mode == "" {
		mode = string(ledger.ModeOpen)
	}
	p := Probe{
		Mode: mode, Valid: s.Validity.Valid,
		InvalidReasons: append([]string{}, s.Validity.Reasons()...),
		InvalidCauses:  causesJSON(s.Validity), Host: ladderresult.HostJSONOf(s.Validity.Host),
		Notes:   append([]string{}, s.Validity.Notes...),
		Planned: s.Planned, Retries: s.Retries, Attempts: s.Attempts, Dispatched: s.Dispatched, Unsent: s.Unsent,
		FirstDispatched: s.FirstDispatched, FirstUnsent: s.FirstUnsent, Admitted: s.Admitted,
		Completed: s.Completed, Censored: s.Censored, Rejected: s.Rejected, Cancelled: s.Cancelled,
		InjectedCancels: s.InjectedCancels, OutsideWindow: s.OutsideWindow, Replayed: s.Replayed, Buffered: s.Buffered,
		Outcomes:      make(map[string]int, len(ledger.Outcomes)),
		Reasons:       map[string]map[string]int{},
		RequestedRate: s.RequestedRate, AchievedRate: s.AchievedRate, WindowSeconds: s.Window.Seconds(),
		AcceptedFraction: s.AcceptedFraction, CompletedFraction: s.CompletedFraction,
		TTFT: DistOf(s.TTFT), TTFTFromDispatch: DistOf(s.TTFTFromDispatch), TTFR: DistOf(s.TTFR),
		InterChunk: DistOf(s.InterChunk), InterTokenDerived: DistOf(s.InterTokenDerived), TPOT: DistOf(s.TPOT), E2E: DistOf(s.E2E),
		ArrivalTTFT: DistOf(s.ArrivalTTFT), ArrivalE2E: DistOf(s.ArrivalE2E),
		DispatchLag: DistOf(s.DispatchLag), RejectedResponseTime: DistOf(s.RejectedTime),
		CensoredAge: DistOf(s.CensoredAge),
		Goodput:     Goodput{Count: s.Good, PerSecond: s.GoodputPerSecond, Fraction: s.GoodFraction},
		Gates:       ladderresult.GatesJSONOf(s.Gates),
		GateMisses: GateMisses{TTFT: s.GateMisses.TTFT, TPOT: s.GateMisses.TPOT, E2E: s.GateMisses.E2E,
			TPOTUnverifiable: s.GateMisses.Unverifiable},
		Boundaries:  boundariesFor(s),
		MatchedGaps: MatchedGapsOf(s),
		PrefixCache: PrefixOf(s),
		Turns:       TurnsOf(s),
	}
	for _, o := range ledger.Outcomes {
		p.Outcomes[string(o)] = s.Outcomes.ByOutcome[o]
	}
	for o, m := range s.Outcomes.ByReason {
		rs := make(map[string]int, len(m))
		for r, n := range m {
			rs[string(r)] = n
		}
		p.Reasons[string(o)] = rs
	}
	return p
}

// AddMeta adds what the command knows beside the summary: its verdict,
// the path requested and the answer checks' table.
func (p *Probe) AddMeta(m Meta) {
	if m.Verdict != nil {
		p.Verdict = m.Verdict.JSON()
	}
	p.RequestPath = m.Path
	p.Checks = m.Checks
}

// JSON writes the probe report as one indented JSON object.
func JSON(w io.Writer, s stats.Summary) error { return ProbeJSON(w, ProbeOf(s)) }
