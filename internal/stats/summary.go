package stats

import (
	"maps"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// Config describes the cohort an Accumulator summarises.
type Config struct {
	// Mode is the load model. Empty: taken from the first record.
	Mode ledger.Mode
	// RequestedRate is the scheduled arrival rate in requests per second
	// (open loop); 0 when unknown or not meaningful (closed loop).
	RequestedRate float64
	// Start and Window bound the cohort: arrivals planned in
	// [Start, Start+Window) are counted, whenever they finished (completions
	// during drain included), with all their retries: a retry belongs to the
	// cohort of its arrival's first planned time (Record.ArrivalPlanned),
	// however late it was planned itself. Records of arrivals planned outside
	// are only counted in Summary.OutsideWindow. Window is also the
	// denominator of every rate.
	// Window 0 disables the filter and every rate.
	Start  time.Duration
	Window time.Duration
	// Gates apply to every record unless ClassGates has its class.
	Gates      Gates
	ClassGates map[string]Gates
	// Validity tunes the generator-validity verdict (zero fields take the
	// defaults of DefaultValidity).
	Validity verdict.ValidityConfig
	// SampleCap is the exact-sample cap of each distribution (0: default).
	SampleCap int
	// Steady keeps the first attempts' times for the steady-state
	// evidence and saturation verdict (Summary.Steady): a ladder step's.
	Steady bool
	// PrefixPairs maps each shared-prefix class to its cold twin: their
	// prefix-cache speedup is Summary.Prefix.
	PrefixPairs map[string]string
}

// Summary is every figure over one cohort.
type Summary struct {
	Mode          ledger.Mode
	TTFTBoundary  ledger.TTFTBoundary // which first token TTFT measures to ("" = visible content)
	RequestedRate float64             // req/s asked for (0: unknown / closed loop)
	Window        time.Duration       // arrival window (0: unknown)
	// WindowAsked is the window the cohort was given when its arrivals
	// were stopped early and Window cut short to the time they ran
	// (SetWindow: an aborted or interrupted ladder step); 0 otherwise.
	WindowAsked time.Duration

	// Planned counts arrivals planned inside the window (first attempts
	// only): the demand. Retries counts the further attempts of those
	// arrivals (retries on), and Attempts = Planned + Retries. Dispatched and
	// Unsent count attempts, retries included, so Attempts = Dispatched +
	// Unsent; FirstDispatched and FirstUnsent split the first attempts, so
	// Planned = FirstDispatched + FirstUnsent. With retries off Attempts =
	// Planned and the First counts equal Dispatched and Unsent.
	Planned         int
	Retries         int
	Attempts        int
	Dispatched      int // attempts handed to the transport (= sent), retries included
	Unsent          int // attempts planned but never sent, retries included
	FirstDispatched int // first attempts dispatched: the offered load
	FirstUnsent     int // first attempts never sent
	// Admitted counts attempts the target took (ledger.Record.Admitted): sent
	// and not rejected (429/503), not a transport error before response
	// headers, not a connect timeout.
	Admitted  int
	Completed int // ok
	Censored  int // still in flight at the drain deadline
	Rejected  int // rejected (429/503)
	Cancelled int // cancelled by the client (injection or interrupt)
	Good      int // ok and met every gate
	// InjectedCancels are cancelled by cancellation injection: deliberate,
	// so left out of the denominators of GoodFraction and CompletedFraction.
	InjectedCancels int

	// Replayed counts dispatched attempts the transport sent again on a new
	// connection after a keep-alive race (Record.Replays > 0): not retries,
	// not failures, shown so that nothing is hidden.
	Replayed int
	// Buffered counts ok streams flagged BufferedByIntermediary: their
	// tokens arrived in one burst, held by something on the path.
	Buffered int

	// OutsideWindow counts records fed but planned outside the window.
	OutsideWindow int
	// Pending counts arrivals planned inside the window that were still in
	// flight when the summary was taken (a ladder step whose settle wait
	// ended, or was cut short by an interrupt): they have no record, so
	// they are in no other count, but they were demand and did not finish
	// in time, so GoodFraction counts them as planned and not good. 0
	// outside ladder steps (a run's drain ends them as censored).
	Pending int

	Outcomes Outcomes

	AchievedRate      float64 // (FirstDispatched + Pending) / Window seconds: offered load, retries excluded
	AcceptedFraction  float64 // Admitted / Dispatched, per attempt (0 when nothing was dispatched)
	CompletedFraction float64 // Completed / (Admitted − InjectedCancels); 0 when that is 0
	GoodputPerSecond  float64 // Good / Window seconds
	GoodFraction      float64 // Good / (Planned + Pending − InjectedCancels); 0 when that is 0

	Gates      Gates // the default gates (ClassGates may override per class)
	GateMisses GateMisses

	TTFT             quantile.Percentiles // first content − planned, ok only
	TTFTFromDispatch quantile.Percentiles // first content − dispatched, ok only
	TTFR             quantile.Percentiles // first reasoning − planned, ok only, when any
	E2E              quantile.Percentiles // end − planned, ok only
	// ArrivalTTFT and ArrivalE2E are what the user of an arrival saw: from
	// the arrival's FIRST planned time (Record.ArrivalPlanned) to the first
	// token / end of its ok attempt, failed attempts and backoffs included.
	// Without retries they equal TTFT and E2E; the gates judge them.
	ArrivalTTFT quantile.Percentiles
	ArrivalE2E  quantile.Percentiles
	InterChunk  quantile.Percentiles // every gap between consecutive content events, ok only
	// InterTokenDerived is DERIVED, not measured: each gap divided by the
	// tokens its later chunk carried (per-chunk usage), one sample per token.
	// Empty unless the server reported per-chunk usage.
	InterTokenDerived quantile.Percentiles
	TPOT              quantile.Percentiles // (last − first content) / (completion tokens − 1), ok with usage only
	// PrefillGap and TPOTGap compare the client with the server's own
	// per-request timings (ledger.ServerTimings, llama.cpp), matched request
	// by request: TTFT from dispatch − the server's prompt_ms, and TPOT −
	// its predicted_per_token_ms (Record.PrefillGap, Record.TPOTGap). ok
	// requests with valid server timings only; a gap can be negative.
	PrefillGap   quantile.Percentiles
	TPOTGap      quantile.Percentiles
	DispatchLag  quantile.Percentiles // dispatched − planned, every dispatched record
	RejectedTime quantile.Percentiles // end − planned, rejected only
	CensoredAge  quantile.Percentiles // end − planned, censored only: lower bounds, not latencies

	Validity verdict.Validity
	// Turns are the figures by turn index of a cohort of multi-turn
	// sessions (nil without sessions). A session's later turns are counted
	// in the window its session started in, in every count above, but
	// kept out of AchievedRate and the rate the generator is judged on
	// (the schedule planned only the first turns).
	Turns []TurnFigures
	// Steady is the steady-state evidence and saturation verdict (a
	// ladder step's: Config.Steady, or merged from parts that carried
	// it); nil otherwise. A saturated step is never the capacity (Qualifies).
	Steady *verdict.Steady
	// Prefix is each shared-prefix class's speedup over its cold twin
	// (Config.PrefixPairs), by class name; nil without pairs.
	Prefix []PrefixSpeedup
}

// Accumulator folds records into a Summary one at a time. It implements
// ledger.Sink and is safe for concurrent use.
type Accumulator struct {
	mu  sync.Mutex
	cfg Config
	s   Summary

	ttft, ttftD, ttfr, e2e, gaps, perTok, tpot, lag, rej, cens *quantile.Dist
	arrTTFT, arrE2E, prefillGap, tpotGap                       *quantile.Dist
	clientCap, firstClientCap                                  int
	lagLimit                                                   time.Duration // the validity rule's dispatch-lag limit
	lagOver                                                    int           // dispatched attempts whose lag exceeded lagLimit
	lagHard                                                    time.Duration // the validity rule's hard limit (HardLimit)
	lagOverHard                                                int           // dispatched attempts whose lag exceeded lagHard
	lagN                                                       int           // dispatched attempts with a dispatch lag
	host                                                       verdict.HostHealth
	window0                                                    time.Duration  // cfg.Window before SetWindow
	steady                                                     *steadyAcc     // Config.Steady
	steadyParts                                                []*ShardSteady // merged parts' evidence
	absorbed                                                   int            // parts merged
	prefix                                                     *prefixAcc     // Config.PrefixPairs; nil without
	turns                                                      turnAcc        // sessions, by turn
}

// NewAccumulator returns an empty accumulator for cfg.
func NewAccumulator(cfg Config) *Accumulator {
	c := cfg.SampleCap
	a := &Accumulator{
		cfg:  cfg,
		ttft: quantile.NewDist(c), ttftD: quantile.NewDist(c), ttfr: quantile.NewDist(c), e2e: quantile.NewDist(c), gaps: quantile.NewDist(c), perTok: quantile.NewDist(c),
		tpot: quantile.NewDist(c), lag: quantile.NewDist(c), rej: quantile.NewDist(c), cens: quantile.NewDist(c),
		arrTTFT: quantile.NewDist(c), arrE2E: quantile.NewDist(c), prefillGap: quantile.NewDist(c), tpotGap: quantile.NewDist(c),
		lagLimit: cfg.Validity.Limit(), lagHard: cfg.Validity.HardLimit(), window0: cfg.Window,
		prefix: newPrefixAcc(cfg.PrefixPairs, c),
	}
	if cfg.Steady && cfg.Window > 0 {
		a.steady = newSteadyAcc(cfg.Start, cfg.Window)
	}
	a.s.Mode = cfg.Mode
	a.s.RequestedRate = cfg.RequestedRate
	a.s.Window = cfg.Window
	a.s.Gates = cfg.Gates
	a.s.Outcomes = Outcomes{ByOutcome: map[ledger.Outcome]int{}, ByReason: map[ledger.Outcome]map[ledger.Reason]int{}}
	return a
}

// Record implements ledger.Sink; it is Add.
func (a *Accumulator) Record(r *ledger.Record) { a.Add(r) }

// Add folds one finished record into the cohort.
func (a *Accumulator) Add(r *ledger.Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := &a.s
	if p := r.CohortPlanned(); a.cfg.Window > 0 && (p < a.cfg.Start || p >= a.cfg.Start+a.cfg.Window) {
		s.OutsideWindow++
		return
	}
	if s.Mode == "" {
		s.Mode = r.Mode
	}
	if a.steady != nil {
		a.steady.add(r)
	}
	if r.TTFTBoundary != "" {
		s.TTFTBoundary = r.TTFTBoundary
	}
	a.turns.add(r)
	// Retries are attempts, never new demand: only first attempts are planned.
	retry := r.IsRetry()
	if retry {
		s.Retries++
	} else {
		s.Planned++
	}
	s.Attempts++
	s.Outcomes.ByOutcome[r.Outcome]++
	byR := s.Outcomes.ByReason[r.Outcome]
	if byR == nil {
		byR = map[ledger.Reason]int{}
		s.Outcomes.ByReason[r.Outcome] = byR
	}
	byR[r.Reason]++

	if r.Outcome == ledger.Unsent || !r.Sent() {
		s.Unsent++
		if !retry {
			s.FirstUnsent++
		}
		if r.Reason == ledger.ReasonClientCap {
			a.clientCap++
			if !retry {
				a.firstClientCap++
			}
		}
		return
	}
	s.Dispatched++
	if !retry {
		s.FirstDispatched++
	}
	if r.Replays > 0 {
		s.Replayed++
	}
	if r.BufferedByIntermediary && r.Outcome == ledger.OK {
		s.Buffered++
	}
	if r.Admitted() {
		s.Admitted++
	}
	if lag, ok := r.DispatchLag(); ok {
		a.lag.Add(lag)
		a.lagN++
		if lag > a.lagLimit {
			a.lagOver++
		}
		if lag > a.lagHard {
			a.lagOverHard++
		}
	}
	switch r.Outcome {
	case ledger.Rejected:
		s.Rejected++
		a.rej.AddIf(r.E2E())
		return
	case ledger.Censored:
		s.Censored++
		a.cens.Add(r.Age())
	case ledger.Cancelled:
		s.Cancelled++
		if r.Reason == ledger.ReasonInjected {
			s.InjectedCancels++
		}
	case ledger.OK:
		s.Completed++
		a.addSuccess(r)
		if a.prefix != nil {
			a.prefix.add(r)
		}
	}
}

// addSuccess records an ok record's figures and judges it against its gates.
func (a *Accumulator) addSuccess(r *ledger.Record) {
	a.ttft.AddIf(r.TTFT())
	a.ttftD.AddIf(r.TTFTFromDispatch())
	a.ttfr.AddIf(r.TTFR())
	a.e2e.AddIf(r.E2E())
	a.arrTTFT.AddIf(r.ArrivalTTFT())
	a.arrE2E.AddIf(r.ArrivalE2E())
	for _, gap := range r.ChunkGaps {
		a.gaps.Add(gap)
	}
	r.TokenGaps(func(perToken time.Duration, tokens int) {
		for range tokens {
			a.perTok.Add(perToken)
		}
	})
	a.tpot.AddIf(r.TPOT())
	a.prefillGap.AddIf(r.PrefillGap())
	a.tpotGap.AddIf(r.TPOTGap())
	g := a.cfg.Gates
	if cg, ok := a.cfg.ClassGates[r.Class]; ok {
		g = cg
	}
	c := CheckGates(r, g)
	m := &a.s.GateMisses
	m.TTFT += b2i(c.MissTTFT)
	m.TPOT += b2i(c.MissTPOT)
	m.E2E += b2i(c.MissE2E)
	m.Unverifiable += b2i(c.Unverifiable)
	if c.Good {
		a.s.Good++
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Summary returns the figures over everything added so far. It may be
// called repeatedly; later Adds are reflected in later Summaries.
func (a *Accumulator) Summary() Summary {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.s
	s.Outcomes = Outcomes{ByOutcome: maps.Clone(a.s.Outcomes.ByOutcome), ByReason: make(map[ledger.Outcome]map[ledger.Reason]int, len(a.s.Outcomes.ByReason))}
	for o, m := range a.s.Outcomes.ByReason {
		s.Outcomes.ByReason[o] = maps.Clone(m)
	}
	if secs := s.Window.Seconds(); secs > 0 {
		s.AchievedRate = float64(s.FirstDispatched-a.turns.laterDispatched+s.Pending) / secs
		s.GoodputPerSecond = float64(s.Good) / secs
	}
	s.AcceptedFraction = ratio(s.Admitted, s.Dispatched)
	s.CompletedFraction = ratio(s.Completed, s.Admitted-s.InjectedCancels)
	s.GoodFraction = ratio(s.Good, s.Planned+s.Pending-s.InjectedCancels)
	s.TTFT = a.ttft.Percentiles()
	s.TTFTFromDispatch = a.ttftD.Percentiles()
	s.TTFR = a.ttfr.Percentiles()
	s.E2E = a.e2e.Percentiles()
	s.ArrivalTTFT = a.arrTTFT.Percentiles()
	s.ArrivalE2E = a.arrE2E.Percentiles()
	s.InterChunk = a.gaps.Percentiles()
	s.InterTokenDerived = a.perTok.Percentiles()
	s.TPOT = a.tpot.Percentiles()
	s.PrefillGap = a.prefillGap.Percentiles()
	s.TPOTGap = a.tpotGap.Percentiles()
	s.DispatchLag = a.lag.Percentiles()
	s.RejectedTime = a.rej.Percentiles()
	s.CensoredAge = a.cens.Percentiles()
	s.Validity = a.cfg.Validity.Judge(verdict.Evidence{
		Mode: s.Mode, LagCount: a.lagN, LagOver: a.lagOver, LagOverHard: a.lagOverHard,
		LagP99: s.DispatchLag.P99, LagMax: s.DispatchLag.Max, LagP99Approx: !s.DispatchLag.Exact,
		ClientCap: a.clientCap, FirstClientCap: a.firstClientCap - a.turns.laterClientCap,
		RequestedRate: s.RequestedRate, Window: s.Window,
		FirstDispatched: s.FirstDispatched - a.turns.laterDispatched, FirstUnsent: s.FirstUnsent - a.turns.laterUnsent,
		Pending: s.Pending, Host: a.host,
	})
	s.Turns = a.turns.figures()
	s.Steady = a.steadyVerdict()
	if a.prefix != nil {
		s.Prefix = a.prefix.figures()
	}
	return s
}

// SetHost gives the verdict the prober host's health over the cohort's
// window, so that a late generator is blamed on a starved host when it was
// one (see ValidityConfig.Judge).
func (a *Accumulator) SetHost(h verdict.HostHealth) {
	a.mu.Lock()
	a.host = h
	a.mu.Unlock()
}

// SetWindow ends the cohort's window early: arrivals stopped at Start+w
// (an aborted or interrupted ladder step), so rates, and the validity
// verdict's expected arrivals, are over the time the schedule actually
// ran. It never lengthens the window, and a w below 1 ms is taken as 1 ms
// (a window of 0 would disable every rate). Records already added stay;
// the caller shortens the window only once no arrival can be planned past
// it.
func (a *Accumulator) SetWindow(w time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cfg.Window <= 0 {
		return // no window: nothing to shorten
	}
	w = max(w, time.Millisecond)
	if w < a.cfg.Window {
		a.cfg.Window, a.s.Window, a.s.WindowAsked = w, w, a.window0
	}
}

// SetPending records n arrivals of the cohort still in flight when it is
// summarised (see Summary.Pending).
func (a *Accumulator) SetPending(n int) {
	a.mu.Lock()
	a.s.Pending = max(n, 0)
	a.mu.Unlock()
}

// Summarize is a one-shot Accumulator over recs.
func Summarize(cfg Config, recs []ledger.Record) Summary {
	a := NewAccumulator(cfg)
	for i := range recs {
		a.Add(&recs[i])
	}
	return a.Summary()
}

func ratio(num, den int) float64 {
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}
