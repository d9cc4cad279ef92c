package dispatch

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestOpenOnPlan: OnPlan sees every record the stream plans (sent, refused
// by Admit, refused by the cap, retries, and arrivals ended by a drain), each
// before it ends, and no record of another stream on the same ledger.
func TestOpenOnPlan(t *testing.T) {
	col := &collector{}
	var mu sync.Mutex
	planned := map[uint64]bool{}
	endedFirst := 0 // records that reached the sink before OnPlan saw them
	ended := map[uint64]bool{}
	onPlan := func(rec *ledger.Record) {
		mu.Lock()
		defer mu.Unlock()
		if ended[rec.ID] {
			endedFirst++
		}
		planned[rec.ID] = true
	}
	// A second sink notes each end, to check the order.
	order := ledger.SinkFunc(func(r *ledger.Record) {
		mu.Lock()
		ended[r.ID] = true
		mu.Unlock()
	})
	led := ledger.New(time.Now(), col, order)
	g := NewGroup(led)

	n := 0
	arrivals := arrivalsFunc(func() (time.Duration, bool) {
		n++
		return time.Duration(n-1) * 5 * time.Millisecond, true // until the drain
	})
	var calls atomic.Int64
	exec := func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		dispatched()
		if rec.Attempt == 1 && rec.ID%3 == 0 {
			return ledger.Result{Outcome: ledger.Rejected, Reason: ledger.ReasonStatus429}
		}
		select { // hold some requests so the cap refuses others
		case <-time.After(12 * time.Millisecond):
		case <-ctx.Done():
		}
		return ledger.Result{Outcome: ledger.OK, Reason: ledger.ReasonStop}
	}
	admit := func(*ledger.Record) (ledger.Reason, bool) {
		if calls.Add(1)%5 == 0 {
			return ledger.ReasonBudget, false
		}
		return "", true
	}
	other := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // another stream on the same ledger, without the hook
		k := 0
		other <- g.Open(ctx, OpenConfig{Arrivals: arrivalsFunc(func() (time.Duration, bool) { k++; return 0, k <= 3 }),
			Exec: okExec, Meta: func(time.Duration) ledger.Meta { return ledger.Meta{Target: "other"} }})
	}()
	done := make(chan error, 1)
	go func() {
		done <- g.Open(ctx, OpenConfig{Arrivals: arrivals, Exec: exec, Admit: admit, MaxInFlight: 2, OnPlan: onPlan,
			Retry: Retry{MaxAttempts: 2, Backoff: time.Millisecond, MaxBackoff: time.Millisecond}})
	}()
	time.Sleep(150 * time.Millisecond)
	g.Drain(context.Background(), time.Second) // stops the stream: later arrivals end unsent/shutdown
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-other; err != nil {
		t.Fatal(err)
	}
	checkLedger(t, led, col)
	mu.Lock()
	defer mu.Unlock()
	seen := map[ledger.Reason]int{}
	retries := 0
	mine := 0
	for _, r := range col.all() {
		if r.Target == "other" {
			if planned[r.ID] {
				t.Errorf("OnPlan saw record %d of another stream", r.ID)
			}
			continue
		}
		mine++
		if !planned[r.ID] {
			t.Errorf("record %d (%s/%s) ended without OnPlan", r.ID, r.Outcome, r.Reason)
		}
		seen[r.Reason]++
		if r.IsRetry() {
			retries++
		}
	}
	if len(planned) != mine {
		t.Errorf("OnPlan saw %d records, the stream's records that ended: %d", len(planned), mine)
	}
	if endedFirst > 0 {
		t.Errorf("%d records ended before OnPlan saw them", endedFirst)
	}
	if seen[ledger.ReasonBudget] == 0 || seen[ledger.ReasonClientCap] == 0 || retries == 0 {
		t.Errorf("the run did not exercise every path: reasons %v, %d retries", seen, retries)
	}
}
