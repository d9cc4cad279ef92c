package probehandler

import (
	"context"
	"errors"
	"time"

	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
)

// burst is a probe's schedule: n arrivals spacing apart from the scrape's
// arrival, fixed before the first is sent.
type burst struct {
	n, next int
	spacing time.Duration
}

// Next implements dispatch.Arrivals.
func (b *burst) Next() (time.Duration, bool) {
	if b.next >= b.n {
		return 0, false
	}
	b.next++
	return time.Duration(b.next-1) * b.spacing, true
}

// result is what one probe left: its records and its length.
type result struct {
	records  []ledger.Record // those that ended, in plan order
	planned  int
	duration time.Duration // from the scrape's arrival to the last record's end
	err      error         // the stream could not run (a bug: never a target's doing)
}

// waitGrace is how long after its timeout a probe still waits for its
// records: a request ends promptly once its context does, so this is a
// safety net, never a figure.
const waitGrace = 5 * time.Second

// errScrapeGone ends a probe's requests when Prometheus gave up on the
// scrape: they are recorded cancelled/interrupted.
var errScrapeGone = errors.New("the scrape was abandoned")

// run sends the probe: its burst planned open loop from now, each request
// bounded by the probe's deadline (recorded timeout/total when it passes)
// and by the scrape (cancelled when Prometheus goes away).
func (h *Handler) run(scrape context.Context, p *probe) result {
	// The burst is planned from this instant and the deadline counts from
	// it too (the ledger's clock read first, so a request's age at the
	// deadline is never under the probe's timeout).
	from := h.o.Group.Ledger().Now()
	start := time.Now()
	deadline := start.Add(p.timeout)
	rn := h.o.Collector.start()
	planCtx, cancel := context.WithDeadline(scrape, deadline)
	defer cancel()
	err := h.o.Group.Open(planCtx, dispatch.OpenConfig{
		Start:    from,
		Arrivals: &burst{n: p.burst.Requests, spacing: p.burst.Spacing.D()},
		Meta:     p.meta,
		Admit:    p.admit,
		Exec:     bounded(p.exec, deadline, p.timeout, scrape),
		OnPlan:   rn.plan,
	})
	recs, planned := rn.wait(time.Until(deadline) + waitGrace)
	return result{records: recs, planned: planned, duration: time.Since(start), err: err}
}

// refuse records a probe beyond probe.max_concurrent: its arrivals, all
// at the moment of refusal, unsent/client_cap.
func (h *Handler) refuse(p *probe) {
	_ = h.o.Group.Open(context.Background(), dispatch.OpenConfig{
		Arrivals: &burst{n: p.burst.Requests},
		Meta:     p.meta,
		Admit:    func(*ledger.Record) (ledger.Reason, bool) { return ledger.ReasonClientCap, false },
		Exec: func(context.Context, *ledger.Record, func()) ledger.Result { // never called: every arrival is refused
			return ledger.Result{Outcome: ledger.TransportError, Reason: ledger.ReasonTransportOther}
		},
	})
}

// meta describes each of the probe's arrivals.
func (p *probe) meta(time.Duration) ledger.Meta {
	return ledger.Meta{Traffic: ledger.TrafficProbe, Target: p.label, Class: p.module, API: p.api, TTFTBoundary: p.boundary}
}

// bounded ends inner's request at the probe's deadline, as a timeout
// (protocol.TimeoutCause: timeout/total), or when the scrape is abandoned.
func bounded(inner dispatch.Exec, deadline time.Time, limit time.Duration, scrape context.Context) dispatch.Exec {
	return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		ctx, cancel := context.WithDeadlineCause(ctx, deadline, protocol.TimeoutCause(ledger.ReasonTotal, limit))
		defer cancel()
		ctx, gone := context.WithCancelCause(ctx)
		defer gone(nil)
		defer context.AfterFunc(scrape, func() { gone(errScrapeGone) })()
		return inner(ctx, rec, dispatched)
	}
}
