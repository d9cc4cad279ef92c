package dispatch

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Flight states. A flight is finished by its own goroutine only; Drain and
// interrupts claim it (compare-and-swap) and the goroutine then records the
// claimer's outcome instead of the Exec's result. Whoever swaps first wins,
// so the ledger sees exactly one Finish per record. Sending is a state too,
// so that a flight is claimed either before it was sent (it then never is:
// unsent/shutdown) or after (censored or cancelled), never in between.
const (
	stateIdle        int32 = iota // registered, not sent yet
	stateSent                     // the Exec called dispatched
	stateDone                     // the Exec's own result stands
	stateCensored                 // claimed at the drain deadline after it was sent
	stateInterrupted              // claimed by an interrupt after it was sent
	stateStopped                  // claimed before it was sent
)

var (
	errDrainDeadline = errors.New("dispatch: drain deadline reached")
	errInterrupted   = errors.New("dispatch: run interrupted")
)

// Group owns every in-flight request of a run, across any number of open-
// and closed-loop streams that share one ledger, and drains them.
type Group struct {
	led *ledger.Ledger

	draining  atomic.Bool
	drainCh   chan struct{} // closed when Drain starts: no new arrivals
	drainOnce sync.Once
	stopped   atomic.Bool
	stopCh    chan struct{} // closed at the drain deadline or an interrupt: no more retries
	stopOnce  sync.Once

	censorEnd    atomic.Int64 // ledger offset of the drain deadline (stateCensored)
	interruptEnd atomic.Int64 // ledger offset of the interrupt (stateInterrupted)

	stripes []*stripe     // fixed at creation; streams are spread over them
	next    atomic.Uint32 // round robin over stripes

	flights sync.WaitGroup // one per request chain (a request and its retries)
	loops   sync.WaitGroup // closed-loop user and session goroutines
	// sessions counts the session goroutines (also in loops): AwaitSessions
	// waits for them.
	sessions sync.WaitGroup
}

// stripe is a set of in-flight requests. Streams are spread over a fixed
// number of stripes so that they do not contend on one lock and the group's
// state does not grow with the number of streams a long run starts.
type stripe struct {
	mu sync.Mutex
	m  map[*flight]struct{}
}

type flight struct {
	rec    *ledger.Record
	cancel context.CancelCauseFunc
	state  atomic.Int32
}

// NewGroup returns a Group that records into led.
func NewGroup(led *ledger.Ledger) *Group {
	g := &Group{led: led, drainCh: make(chan struct{}), stopCh: make(chan struct{}), stripes: make([]*stripe, numStripes)}
	for i := range g.stripes {
		g.stripes[i] = &stripe{m: make(map[*flight]struct{})}
	}
	return g
}

// Ledger returns the group's ledger.
func (g *Group) Ledger() *ledger.Ledger { return g.led }

// numStripes is the number of flight sets per group.
const numStripes = 16

// newStripe picks the stripe for a new stream.
func (g *Group) newStripe() *stripe {
	return g.stripes[g.next.Add(1)%numStripes]
}

// register adds a flight for rec to s. A new chain (chain true: a first
// attempt) is counted in g.flights and refused once the group drains; a
// retry within a chain is refused only once the group has stopped (drain
// deadline or interrupt).
func (g *Group) register(s *stripe, f *flight, chain bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g.stopped.Load() || (chain && g.draining.Load()) {
		return false
	}
	s.m[f] = struct{}{}
	if chain {
		g.flights.Add(1)
	}
	return true
}

func (s *stripe) remove(f *flight) {
	s.mu.Lock()
	delete(s.m, f)
	s.mu.Unlock()
}

// begin registers a flight for the planned record rec in s; chain also
// counts a new request chain (a first attempt and its retries) in
// g.flights. It fails once the group is draining: the caller then ends rec
// unsent/shutdown.
func (g *Group) begin(base context.Context, s *stripe, rec *ledger.Record, chain bool) (*flight, context.Context, bool) {
	ctx, cancel := context.WithCancelCause(base)
	f := &flight{rec: rec, cancel: cancel}
	if !g.register(s, f, chain) {
		cancel(nil)
		return nil, nil, false
	}
	return f, ctx, true
}

// run performs one registered attempt and finishes its record with the
// Exec's result or, when Drain or an interrupt claimed the flight first,
// with theirs. It reports the outcome recorded and whether the Exec's own
// result stood.
func (g *Group) run(ctx context.Context, s *stripe, f *flight, x Exec) (ledger.Result, bool) {
	res := x(ctx, f.rec, func() { g.markSent(f) })
	s.remove(f)
	f.cancel(nil)
	rec := f.rec
	st := f.state.Load()
	for st == stateIdle || st == stateSent {
		if f.state.CompareAndSwap(st, stateDone) {
			if st == stateIdle {
				// Contract breach: an Exec must call dispatched. Count it as
				// sent now so that the ledger has no hole (its lag is then an
				// upper bound).
				g.led.MarkDispatched(rec)
			}
			if err := ledger.Check(res.Outcome, res.Reason); err != nil || res.Outcome == ledger.Unsent {
				res = ledger.Result{Outcome: ledger.TransportError, Reason: ledger.ReasonTransportOther, Err: "executor returned an invalid outcome"}
			}
			_ = g.led.Finish(rec, res.Outcome, res.Reason, res.Err)
			return res, true
		}
		st = f.state.Load()
	}
	var end time.Duration
	switch st {
	case stateStopped:
		// Claimed before the Exec got as far as sending: it never was.
		_ = g.led.Unsent(rec, ledger.ReasonShutdown)
		return ledger.Result{Outcome: ledger.Unsent, Reason: ledger.ReasonShutdown}, false
	case stateCensored:
		end = time.Duration(g.censorEnd.Load())
		res = ledger.Result{Outcome: ledger.Censored, Reason: ledger.ReasonDrainDeadline, Err: "still in flight at the drain deadline"}
	default: // stateInterrupted
		end = time.Duration(g.interruptEnd.Load())
		res = ledger.Result{Outcome: ledger.Cancelled, Reason: ledger.ReasonInterrupted, Err: "run interrupted"}
	}
	// A request stamped sent in the instant between the deadline and its
	// claim ends at its dispatch, never before it.
	rec.End = max(end, rec.Dispatched)
	_ = g.led.Finish(rec, res.Outcome, res.Reason, res.Err)
	return res, false
}

// markSent stamps the dispatch, once, unless the flight was already claimed:
// its context is then cancelled and the request is not counted as sent.
func (g *Group) markSent(f *flight) {
	if f.state.CompareAndSwap(stateIdle, stateSent) {
		g.led.MarkDispatched(f.rec)
	}
}

// Drain stops the group taking new arrivals and waits for what is in
// flight (retries included), up to deadline. At the deadline every request
// still in flight is cancelled and recorded censored/drain_deadline with End
// at the deadline (its age is a lower bound, never a latency sample); the
// number censored is returned. A request whose Exec had not yet called
// dispatched is not sent at all and is recorded unsent/shutdown. If ctx is cancelled first, what is in flight is cancelled and
// recorded cancelled/interrupted instead. Either way retries still waiting
// for their backoff are abandoned (a retry is not demand: the attempt it
// would repeat already has its outcome). Drain returns once every request
// has its terminal outcome and every closed-loop user has stopped.
//
// Stop the group's streams first (cancel the contexts given to Open and
// Closed): a stream still running when Drain starts stops planning, and any
// arrival that reaches its planned time during the drain is unsent/shutdown.
// Drain is final; calling it again only waits.
func (g *Group) Drain(ctx context.Context, deadline time.Duration) (censored int) {
	g.drainOnce.Do(func() {
		g.draining.Store(true)
		close(g.drainCh)
	})
	// Barrier: a registration that raced with the flag is visible now.
	stripes := g.stripes
	for _, s := range stripes {
		s.mu.Lock()
		//lint:ignore SA2001 empty critical section is the barrier
		s.mu.Unlock()
	}
	done := make(chan struct{})
	go func() {
		g.flights.Wait()
		close(done)
	}()
	if deadline < 0 {
		deadline = 0
	}
	t := time.NewTimer(deadline)
	defer t.Stop()
	interrupt := func() {
		g.interruptEnd.Store(int64(g.led.Now()))
		g.claim(stripes, stateInterrupted, errInterrupted)
		<-done
	}
	if ctx.Err() != nil { // an interrupt wins over a deadline that is also due
		interrupt()
	} else {
		select {
		case <-done:
		case <-t.C:
			if ctx.Err() != nil {
				interrupt()
				break
			}
			g.censorEnd.Store(int64(g.led.Now()))
			censored = g.claim(stripes, stateCensored, errDrainDeadline)
			<-done
		case <-ctx.Done():
			interrupt()
		}
	}
	g.loops.Wait()
	return censored
}

// claim claims every registered flight for state (stateCensored or
// stateInterrupted) and cancels it; a flight not yet sent is claimed as
// stopped instead. It returns how many sent flights it claimed.
func (g *Group) claim(stripes []*stripe, state int32, cause error) int {
	g.stopOnce.Do(func() {
		g.stopped.Store(true)
		close(g.stopCh)
	})
	n := 0
	for _, s := range stripes {
		s.mu.Lock()
		for f := range s.m {
			for {
				st := f.state.Load()
				to := state
				if st == stateIdle {
					to = stateStopped
				} else if st != stateSent {
					break // done or already claimed
				}
				if f.state.CompareAndSwap(st, to) {
					if to == state {
						n++
					}
					f.cancel(cause)
					break
				}
			}
		}
		s.mu.Unlock()
	}
	return n
}

// InFlight returns the number of requests in flight in the group.
func (g *Group) InFlight() int {
	n := 0
	for _, s := range g.stripes {
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}
