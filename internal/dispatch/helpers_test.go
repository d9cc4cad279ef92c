package dispatch

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// collector is a sink that keeps a copy of every finished record.
type collector struct {
	mu   sync.Mutex
	recs []ledger.Record
}

func (c *collector) Record(r *ledger.Record) {
	c.mu.Lock()
	c.recs = append(c.recs, *r)
	c.mu.Unlock()
}

func (c *collector) all() []ledger.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.recs)
	slices.SortFunc(out, func(a, b ledger.Record) int { return int(a.ID) - int(b.ID) })
	return out
}

func (c *collector) by(o ledger.Outcome) []ledger.Record {
	var out []ledger.Record
	for _, r := range c.all() {
		if r.Outcome == o {
			out = append(out, r)
		}
	}
	return out
}

func newRun(t *testing.T) (*Group, *ledger.Ledger, *collector) {
	t.Helper()
	col := &collector{}
	led := ledger.New(time.Now(), col)
	return NewGroup(led), led, col
}

// checkLedger asserts the ledger's invariants after a drain: nothing
// pending, one terminal outcome per record, attempts = dispatched + unsent,
// no record sent before its planned time, and the outcome counts match the
// records the sink saw.
func checkLedger(t *testing.T, led *ledger.Ledger, col *collector) ledger.Counts {
	t.Helper()
	if err := led.Verify(); err != nil {
		t.Errorf("ledger invariants: %v", err)
	}
	c := led.Counts()
	recs := col.all()
	if c.Pending != 0 {
		t.Errorf("%d records still pending", c.Pending)
	}
	if len(recs) != c.Attempts || c.Finished != c.Attempts {
		t.Errorf("sink saw %d records, ledger finished %d of %d attempts", len(recs), c.Finished, c.Attempts)
	}
	if c.Attempts != c.Dispatched+c.Unsent {
		t.Errorf("attempts %d != dispatched %d + unsent %d", c.Attempts, c.Dispatched, c.Unsent)
	}
	seen := make(map[uint64]bool, len(recs))
	byOutcome := map[ledger.Outcome]int{}
	for _, r := range recs {
		if seen[r.ID] {
			t.Errorf("record %d finished twice", r.ID)
		}
		seen[r.ID] = true
		byOutcome[r.Outcome]++
		if err := ledger.Check(r.Outcome, r.Reason); err != nil {
			t.Errorf("record %d: %v", r.ID, err)
		}
		if r.Outcome == ledger.Unsent {
			if r.Dispatched != 0 || r.End != 0 {
				t.Errorf("unsent record %d has dispatched %v end %v", r.ID, r.Dispatched, r.End)
			}
			continue
		}
		if r.Dispatched < r.Planned {
			t.Errorf("record %d sent %v before its planned time", r.ID, r.Planned-r.Dispatched)
		}
		if r.End < r.Dispatched {
			t.Errorf("record %d ends %v before it was sent", r.ID, r.Dispatched-r.End)
		}
	}
	for o, n := range c.ByOutcome {
		if byOutcome[o] != n {
			t.Errorf("ledger counts %d %s, sink saw %d", n, o, byOutcome[o])
		}
	}
	return c
}

// replay returns the offsets a fresh sequence with spec and steps yields
// below window.
func replay(t *testing.T, spec schedule.Spec, window time.Duration, steps ...schedule.Step) []time.Duration {
	t.Helper()
	s, err := schedule.New(spec, steps...)
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Duration
	for {
		off, ok := s.Next()
		if !ok || off >= window {
			return out
		}
		out = append(out, off)
	}
}

func seq(t testing.TB, spec schedule.Spec, steps ...schedule.Step) *schedule.Sequence {
	t.Helper()
	s, err := schedule.New(spec, steps...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func okExec(_ context.Context, _ *ledger.Record, dispatched func()) ledger.Result {
	dispatched()
	return ledger.Result{Outcome: ledger.OK, Reason: ledger.ReasonStop}
}

// sleepExec answers ok after d, or gives up when its context ends.
func sleepExec(d time.Duration) Exec {
	return func(ctx context.Context, _ *ledger.Record, dispatched func()) ledger.Result {
		dispatched()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return ledger.Result{Outcome: ledger.OK, Reason: ledger.ReasonStop}
		case <-ctx.Done():
			return ledger.Result{Outcome: ledger.Timeout, Reason: ledger.ReasonTotal, Err: "context ended"}
		}
	}
}

// blockExec waits for its context to end.
func blockExec(ctx context.Context, _ *ledger.Record, dispatched func()) ledger.Result {
	dispatched()
	<-ctx.Done()
	return ledger.Result{Outcome: ledger.TransportError, Reason: ledger.ReasonConnectionReset}
}

func median(xs []time.Duration) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
