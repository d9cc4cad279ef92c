package dispatch

import (
	"context"
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// stream is what one Open or Closed call shares with its request chains.
type stream struct {
	g     *Group
	s     *stripe
	base  context.Context // request contexts derive from it: values kept, never cancelled by the stream's ctx
	exec  Exec
	admit Admit
	retry Retry
	lim   *limiter
	// onPlan sees every record the stream plans (OpenConfig.OnPlan); nil = none.
	onPlan func(*ledger.Record)
}

// planned hands a record the stream just planned to onPlan.
func (st *stream) planned(rec *ledger.Record) {
	if st.onPlan != nil {
		st.onPlan(rec)
	}
}

// arrive handles one arrival at its planned time: plan it, ask Admit, apply
// the cap and register it. It returns the flight to run, or nil when the
// arrival ended unsent. err is set only for a programming error (an Admit
// reason outside the unsent set).
func (st *stream) arrive(m ledger.Meta, planned time.Duration) (*flight, context.Context, error) {
	led := st.g.led
	rec := led.Plan(withAttempt(m, st.retry), planned)
	st.planned(rec)
	if st.g.draining.Load() {
		_ = led.Unsent(rec, ledger.ReasonShutdown)
		return nil, nil, nil
	}
	return st.admitAndRegister(rec, true)
}

// admitAndRegister asks Admit, applies the in-flight cap and registers a
// flight for the planned record rec (chain: a first attempt, which starts a
// request chain counted in g.flights). When one of them refuses, rec ends
// unsent with its reason and the flight is nil. err is set only for a
// programming error: an Admit reason outside the unsent set (rec then ends
// unsent/shutdown).
func (st *stream) admitAndRegister(rec *ledger.Record, chain bool) (*flight, context.Context, error) {
	led := st.g.led
	if st.admit != nil {
		if reason, ok := st.admit(rec); !ok {
			if err := ledger.Check(ledger.Unsent, reason); err != nil {
				_ = led.Unsent(rec, ledger.ReasonShutdown)
				return nil, nil, fmt.Errorf("dispatch: admit refused record %d with a reason that is not an unsent reason: %w", rec.ID, err)
			}
			_ = led.Unsent(rec, reason)
			return nil, nil, nil
		}
	}
	if !st.lim.acquire() {
		_ = led.Unsent(rec, ledger.ReasonClientCap)
		return nil, nil, nil
	}
	f, ctx, ok := st.g.begin(st.base, st.s, rec, chain)
	if !ok {
		st.lim.release()
		_ = led.Unsent(rec, ledger.ReasonShutdown)
		return nil, nil, nil
	}
	return f, ctx, nil
}

// withAttempt sets a first attempt's number: 1 when retries are on, 0 off.
func withAttempt(m ledger.Meta, r Retry) ledger.Meta {
	m.Attempt = 0
	if r.Enabled() {
		m.Attempt = 1
	}
	return m
}

// chain runs a registered first attempt and, when the retry policy says so,
// its retries; it ends the chain counted in g.flights. It returns the
// outcome of the chain's last attempt sent: a retry refused admission
// (recorded unsent) leaves the failure it would have repeated, so a
// closed-loop user still backs off from a failing target.
func (st *stream) chain(ctx context.Context, f *flight) (last ledger.Outcome) {
	g := st.g
	defer g.flights.Done()
	res, own := g.run(ctx, st.s, f, st.exec)
	st.lim.release()
	rec := f.rec
	defer func() { last = res.Outcome }()
	if !st.retry.Enabled() {
		return
	}
	var timer *time.Timer
	for own && st.retry.retryable(res.Outcome, rec.Attempt) {
		d, ok := st.retry.delay(rec.Attempt, arrivalKey(rec), rec.RetryAfter)
		if !ok {
			return
		}
		if timer == nil {
			timer = time.NewTimer(d)
			defer timer.Stop()
		} else {
			timer.Reset(d)
		}
		select {
		case <-timer.C:
		case <-g.stopCh:
			return // drain deadline or interrupt: retries are not demand
		}
		// The retry is joined to the attempt it repeats and keeps its
		// arrival's first planned time (stats measure the arrival from it).
		m := metaOf(rec)
		m.Attempt = rec.Attempt + 1
		m.RetryOf = rec.ID
		m.FirstPlanned = rec.ArrivalPlanned()
		rec = g.led.Plan(m, g.led.Now())
		st.planned(rec)
		// A retry spends the same budget and cap as any request. An Admit
		// reason outside the unsent set has already ended it
		// unsent/shutdown; the first attempt's stream reports such errors.
		var rctx context.Context
		if f, rctx, _ = st.admitAndRegister(rec, false); f == nil {
			return
		}
		res, own = g.run(rctx, st.s, f, st.exec)
		st.lim.release()
	}
	return
}
