package daemon

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/statuspage"
)

// The next ladder starts on a settled target: between two ladders, and
// after an identity change, the daemon waits until the previous ladder's
// requests ended and the target's baseline answers again within its normal
// TTFT range (a restart: refused, then a cold start), at most
// ladder.settle_max (docs/ladder.md, "A deploy during a ladder").
const (
	// settleRef is how many normal baseline TTFTs (ok, planned outside any
	// ladder and its settle) make the reference; settleMinRef the fewest
	// that make one at all.
	settleRef, settleMinRef = 64, 5
	// settleK baseline answers in a row, planned since the reference
	// point, must be ok and within range.
	settleK = 3
	// settleFactor × the reference median TTFT is the top of the normal
	// range (at least settleFloor above it: a fast target's jitter).
	settleFactor = 2
	settleFloor  = 100 * time.Millisecond
	settlePoll   = 250 * time.Millisecond
)

// settleWatch is what the wait reads: the ladder's requests in flight and
// the target's recent baseline answers. It belongs to the target's state.
type settleWatch struct {
	mu      sync.Mutex
	flying  int             // ladder requests in flight
	ref     []time.Duration // normal baseline TTFTs, oldest first
	recent  []baselineSeen  // the last settleK baseline answers, oldest first
	lastEnd time.Duration   // ledger offset the last ladder ended (0: none yet)
	wait    *statuspage.LadderSettle
}

// baselineSeen is one finished baseline request.
type baselineSeen struct {
	planned time.Duration
	ok      bool
	ttft    time.Duration
	what    string // outcome/reason when not ok
}

func (s *settleWatch) fly(delta int) {
	s.mu.Lock()
	s.flying += delta
	s.mu.Unlock()
}

// record keeps a finished baseline record.
func (s *settleWatch) record(rec *ledger.Record) {
	if rec.Traffic != ledger.TrafficBaseline {
		return
	}
	ttft, has := rec.TTFT()
	sn := baselineSeen{planned: rec.Planned, ok: rec.Outcome == ledger.OK && has, ttft: ttft, what: string(rec.Outcome) + "/" + string(rec.Reason)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recent = append(s.recent, sn)
	if len(s.recent) > settleK {
		s.recent = s.recent[len(s.recent)-settleK:]
	}
	if sn.ok && rec.During == "" {
		s.ref = append(s.ref, ttft)
		if len(s.ref) > settleRef {
			s.ref = s.ref[len(s.ref)-settleRef:]
		}
	}
}

// ended marks a ladder ending at ledger offset at.
func (s *settleWatch) ended(at time.Duration) {
	s.mu.Lock()
	s.lastEnd = at
	s.mu.Unlock()
}

// limit is the top of the baseline TTFT's normal range (0: too few normal
// answers to say).
func (s *settleWatch) limit() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ref) < settleMinRef {
		return 0
	}
	sorted := slices.Clone(s.ref)
	slices.Sort(sorted)
	med := sorted[len(sorted)/2]
	return max(settleFactor*med, med+settleFloor)
}

// check says what the target has not settled from (the zero SettleWait
// when settled): the ladder's requests still in flight, or fewer than
// settleK baseline answers planned since from, one of them failed or above
// limit. baseline is false when the target has no baseline to read (only
// the ladder's requests are waited for). statuspage words it.
func (s *settleWatch) check(from, limit time.Duration, baseline bool) (w statuspage.SettleWait, latest time.Duration, flying int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recent) > 0 {
		latest = s.recent[len(s.recent)-1].ttft
	}
	if s.flying > 0 {
		return statuspage.SettleWait{Kind: statuspage.SettleInFlight}, latest, s.flying
	}
	if !baseline {
		return w, latest, 0
	}
	n := 0
	for _, sn := range s.recent {
		if sn.planned < from {
			continue
		}
		n++
		switch {
		case !sn.ok:
			return statuspage.SettleWait{Kind: statuspage.SettleFailed, Failure: sn.what}, latest, 0
		case limit > 0 && sn.ttft > limit:
			return statuspage.SettleWait{Kind: statuspage.SettleSlow, TTFT: sn.ttft}, latest, 0
		}
	}
	if n < settleK {
		return statuspage.SettleWait{Kind: statuspage.SettleFew, Answers: n, Need: settleK}, latest, 0
	}
	return w, latest, 0
}

func (s *settleWatch) setWait(w *statuspage.LadderSettle) {
	s.mu.Lock()
	s.wait = w
	s.mu.Unlock()
}

// waiting is the wait now, nil when none (the status page's facts).
func (s *settleWatch) waiting() *statuspage.LadderSettle {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wait == nil {
		return nil
	}
	w := *s.wait
	return &w
}

// awaitSettled waits, before a ladder, until the target settled or
// ladder.settle_max passed (then the ladder starts with a note in the
// log); false when ctx ended first. The baseline is read after a ladder
// ran in this process (from its end) and on an identity change (from
// now: the deploy may have restarted the server).
func (r *targetRun) awaitSettled(ctx context.Context, d *Daemon, trigger string) bool {
	most := r.cfg.Ladder.SettleMax.D()
	if most <= 0 {
		return true
	}
	s := &r.state.settle
	s.mu.Lock()
	from := s.lastEnd
	s.mu.Unlock()
	baseline := r.cfg.Baseline.Enabled && r.cfg.Baseline.Rate > 0 && (from > 0 || trigger == "identity_change")
	if trigger == "identity_change" {
		from = max(from, d.led.Now())
	}
	limit, began := s.limit(), d.now()
	deadline := time.NewTimer(most)
	defer deadline.Stop()
	tick := time.NewTicker(settlePoll)
	defer tick.Stop()
	defer func() {
		s.setWait(nil)
		r.setLaddering("")
	}()
	// A ladder belongs to one identity: with a version source and a
	// baseline to name the model, it waits until both are known.
	watchIdentity := r.polls() && r.cfg.Baseline.Enabled && r.cfg.Baseline.Rate > 0
	for logged := false; ; logged = true {
		waiting, latest, flying := s.check(from, limit, baseline)
		if waiting.Kind == statuspage.Settled && watchIdentity && r.state.identity().IsZero() {
			waiting.Kind = statuspage.SettleNoIdentity
		}
		if waiting.Kind == statuspage.Settled {
			if logged {
				d.log.Info("target settled: the ladder starts", "target", r.name, "trigger", trigger, "waited", d.now().Sub(began).Round(time.Millisecond))
			}
			return true
		}
		wait := &statuspage.LadderSettle{Trigger: trigger, Since: began, Max: most, LadderInFlight: flying, BaselineTTFT: latest, Limit: limit, Waiting: waiting}
		why := statuspage.SettleWhy(*wait)
		if !logged {
			d.log.Info("ladder waits for the target to settle", "target", r.name, "trigger", trigger, "why", why,
				"baseline_ttft_limit", limit, "settle_max", most)
		}
		s.setWait(wait)
		r.setLaddering("waiting for the target to settle before the ladder: " + why)
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			d.log.Warn("target not settled within ladder.settle_max: the ladder starts anyway, its first steps may measure the unsettled target",
				"target", r.name, "trigger", trigger, "why", why, "settle_max", most)
			return true
		case <-tick.C:
		}
	}
}
