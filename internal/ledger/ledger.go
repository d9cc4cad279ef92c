package ledger

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// Sink receives every finished record, exactly once, in finishing order.
// Sinks must not retain the *Record past the call unless they copy it; they
// run on the finishing goroutine, under no ledger lock, and must be cheap or
// hand off.
type Sink interface {
	Record(*Record)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(*Record)

// Record implements Sink.
func (f SinkFunc) Record(r *Record) { f(r) }

// Meta is what the caller knows about an arrival when it is planned.
type Meta struct {
	Traffic Traffic
	Mode    Mode
	Target  string
	Class   string
	API     string
	Step    int
	// During: see Record.During ("" = none).
	During  During
	Attempt int
	User    int
	// RetryOf is the ID of the attempt a retry repeats (0 on a first attempt).
	RetryOf uint64
	// FirstPlanned is, on a retry, its arrival's first planned offset (0 on
	// a first attempt).
	FirstPlanned time.Duration
	// TTFTBoundary: which first token TTFT measures to (default visible content).
	TTFTBoundary TTFTBoundary
	// Session and Turn place a record in a multi-turn session (see
	// Record.Session). A first turn planned with Session 0 takes its own
	// record ID as its session's ID.
	Session uint64
	Turn    int
	// SessionPlanned: see Record.SessionPlanned (0 outside later turns).
	SessionPlanned time.Duration
}

// Counts are the ledger's running totals. Attempts = Dispatched + Unsent
// always holds once Pending is zero; Finished + Pending = Attempts always.
// Planned counts demand (first attempts only); Attempts counts every record,
// retries included. With retries off the two are equal.
type Counts struct {
	Planned    int // first attempts (Meta.Attempt ≤ 1): new demand
	Attempts   int // every record planned: first attempts and retries
	Dispatched int
	Unsent     int
	Finished   int
	Pending    int
	ByOutcome  map[Outcome]int
}

// ErrFinished is returned when a record is finished a second time.
var ErrFinished = errors.New("ledger: record already has a terminal outcome")

// Ledger hands out one Record per planned arrival and takes each back exactly
// once with a terminal outcome. It is safe for concurrent use.
type Ledger struct {
	epoch time.Time
	sinks []Sink

	// dispatched is bumped once per request, outside mu (the hot path takes
	// mu only to plan and to finish). A record's MarkDispatched happens
	// before its Finish, so with nothing pending every bump is visible.
	dispatched atomic.Int64

	mu         sync.Mutex
	nextID     uint64
	pending    map[uint64]*Record
	planned    int // first attempts only
	attempts   int // every record
	unsent     int
	finished   int
	byOutcome  map[Outcome]int
	violations []error
}

// New returns a ledger whose offsets are measured from epoch (which must
// carry a monotonic reading: use time.Now()).
func New(epoch time.Time, sinks ...Sink) *Ledger {
	return &Ledger{
		epoch:     epoch,
		sinks:     sinks,
		pending:   make(map[uint64]*Record),
		byOutcome: make(map[Outcome]int),
	}
}

// Now returns the current offset from the epoch, never below 1ns, so that a
// zero offset always means "not reached".
func (l *Ledger) Now() time.Duration {
	d := time.Since(l.epoch)
	if d < 1 {
		d = 1
	}
	return d
}

// Plan registers a planned arrival and returns its pending record. The caller
// must end it with exactly one of Unsent or Finish. A record whose
// m.Attempt is above one (or whose m.RetryOf is set) is a retry: it counts as
// an attempt, never as new demand (Counts.Planned).
func (l *Ledger) Plan(m Meta, planned time.Duration) *Record {
	l.mu.Lock()
	l.nextID++
	r := &Record{
		ID: l.nextID, Traffic: m.Traffic, Mode: m.Mode, Target: m.Target, Class: m.Class,
		API: m.API, Step: m.Step, During: m.During, Attempt: m.Attempt, User: m.User, RetryOf: m.RetryOf, FirstPlanned: m.FirstPlanned,
		Planned: planned, TTFTBoundary: m.TTFTBoundary, Session: m.Session, Turn: m.Turn, SessionPlanned: m.SessionPlanned,
	}
	if r.Turn == 1 && r.Session == 0 {
		r.Session = r.ID
	}
	l.pending[r.ID] = r
	l.attempts++
	if !r.IsRetry() {
		l.planned++
	}
	l.mu.Unlock()
	return r
}

// MarkDispatched stamps the dispatch time. Call it once, just before the
// request is handed to the transport.
func (l *Ledger) MarkDispatched(r *Record) {
	r.Dispatched = l.Now()
	l.dispatched.Add(1)
}

// Unsent ends a planned arrival that was never sent, at its planned time.
func (l *Ledger) Unsent(r *Record, reason Reason) error {
	if r.Dispatched != 0 {
		return l.violation(fmt.Errorf("ledger: record %d: unsent after dispatch", r.ID))
	}
	r.End = 0
	return l.Finish(r, Unsent, reason, "")
}

// Finish records the terminal outcome and hands the record to the sinks. A
// second Finish of the same record is refused with ErrFinished and counted as
// an invariant violation; the first outcome stands.
func (l *Ledger) Finish(r *Record, o Outcome, reason Reason, errText string) error {
	if err := Check(o, reason); err != nil {
		return l.violation(fmt.Errorf("record %d: %w", r.ID, err))
	}
	if o != Unsent && r.Dispatched == 0 {
		return l.violation(fmt.Errorf("ledger: record %d: outcome %s without dispatch", r.ID, o))
	}
	l.mu.Lock()
	if _, ok := l.pending[r.ID]; !ok {
		l.mu.Unlock()
		return l.violation(fmt.Errorf("record %d (%s/%s): %w", r.ID, o, reason, ErrFinished))
	}
	delete(l.pending, r.ID)
	if o != Unsent && r.End == 0 {
		r.End = l.Now()
	}
	r.Outcome, r.Reason, r.Error = o, reason, sanitize.String(errText, MaxErrorBytes)
	// The protocol client cleans what the server sent with the keys it
	// knows; cleaning again costs nothing for a clean string and holds the
	// record's bounds whatever executor filled it.
	r.Model, r.FinishReason = sanitize.String(r.Model, MaxModelBytes), sanitize.String(r.FinishReason, MaxFinishReasonBytes)
	if o == Unsent {
		l.unsent++
	}
	l.finished++
	l.byOutcome[o]++
	l.mu.Unlock()
	for _, s := range l.sinks {
		s.Record(r)
	}
	return nil
}

// CensorPending ends every request still pending as censored at the current
// offset (its age is a lower bound) and returns how many it censored. A
// pending record that was never dispatched is ended unsent with reason
// shutdown. Callers must first stop their in-flight work from finishing the
// same records (cancel and wait), or accept ErrFinished from them.
func (l *Ledger) CensorPending() int {
	l.mu.Lock()
	recs := make([]*Record, 0, len(l.pending))
	for _, r := range l.pending {
		recs = append(recs, r)
	}
	l.mu.Unlock()
	n := 0
	for _, r := range recs {
		var err error
		if r.Dispatched == 0 {
			err = l.Unsent(r, ReasonShutdown)
		} else {
			err = l.Finish(r, Censored, ReasonDrainDeadline, "still in flight at the drain deadline")
			if err == nil {
				n++
			}
		}
		_ = err // a concurrent finisher won: its outcome stands
	}
	return n
}

// Counts returns a snapshot of the running totals.
func (l *Ledger) Counts() Counts {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := Counts{
		Planned: l.planned, Attempts: l.attempts, Dispatched: int(l.dispatched.Load()), Unsent: l.unsent,
		Finished: l.finished, Pending: len(l.pending), ByOutcome: make(map[Outcome]int, len(l.byOutcome)),
	}
	for k, v := range l.byOutcome {
		c.ByOutcome[k] = v
	}
	return c
}

// Verify checks the ledger's invariants and returns every violation seen so
// far plus any that hold now: attempts = finished + pending, and, when
// nothing is pending, attempts = dispatched + unsent (attempts = planned
// when retries are off).
func (l *Ledger) Verify() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	errs := append([]error(nil), l.violations...)
	if l.attempts != l.finished+len(l.pending) {
		errs = append(errs, fmt.Errorf("ledger: planned attempts %d != finished %d + pending %d", l.attempts, l.finished, len(l.pending)))
	}
	if d := int(l.dispatched.Load()); len(l.pending) == 0 && l.attempts != d+l.unsent {
		errs = append(errs, fmt.Errorf("ledger: planned attempts %d != dispatched %d + unsent %d", l.attempts, d, l.unsent))
	}
	return errors.Join(errs...)
}

func (l *Ledger) violation(err error) error {
	l.mu.Lock()
	l.violations = append(l.violations, err)
	l.mu.Unlock()
	return err
}
