package daemon

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// acquireAsync starts acquire for key on a goroutine; the returned channel
// delivers its release (nil and the error when ctx ended first). It
// returns once key is in the queue or holds a turn.
func acquireAsync(t *testing.T, l *ladderTurns, ctx context.Context, key string) <-chan func() {
	t.Helper()
	got := make(chan func(), 1)
	queued := make(chan struct{})
	go func() {
		release, err := l.acquire(ctx, key, func(int) { close(queued) })
		if err != nil {
			release = nil
		}
		got <- release
	}()
	select {
	case <-queued:
	case rel := <-got: // granted at once: hand it back through a fresh channel
		again := make(chan func(), 1)
		again <- rel
		return again
	}
	return got
}

// TestLadderTurnsFIFO: with a cap of 1, waiters are granted in the order
// they queued, each only when the one before it released; ahead counts
// the waiters before a key; release is idempotent.
func TestLadderTurnsFIFO(t *testing.T) {
	l := newLadderTurns(1)
	first, err := l.acquire(context.Background(), "a", func(int) { t.Error("the first ladder queued") })
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"b", "c", "d"}
	var waits []<-chan func()
	for _, k := range keys {
		waits = append(waits, acquireAsync(t, l, context.Background(), k))
	}
	if r, w := l.counts(); r != 1 || w != 3 {
		t.Fatalf("counts %d running, %d waiting; want 1, 3", r, w)
	}
	for i, k := range keys {
		if n, ok := l.ahead(k); !ok || n != i {
			t.Errorf("ahead(%s) = %d, %v; want %d", k, n, ok, i)
		}
	}
	if _, ok := l.ahead("a"); ok {
		t.Error("the running ladder is reported waiting")
	}
	release := first
	for i, w := range waits {
		for j := i + 1; j < len(waits); j++ { // none later is granted early
			select {
			case <-waits[j]:
				t.Fatalf("%s granted before %s", keys[j], keys[i])
			default:
			}
		}
		release()
		release() // idempotent: must not free a second turn
		release = <-w
		if release == nil {
			t.Fatalf("%s: no turn", keys[i])
		}
		if r, _ := l.counts(); r != 1 {
			t.Fatalf("after granting %s: %d running, want 1", keys[i], r)
		}
	}
	release()
	if r, w := l.counts(); r != 0 || w != 0 {
		t.Errorf("at the end %d running, %d waiting", r, w)
	}
}

// TestLadderTurnsCap: at most limit ladders hold a turn at once, however
// many goroutines ask together; all of them get one.
func TestLadderTurnsCap(t *testing.T) {
	for _, limit := range []int{1, 2, 5} {
		l := newLadderTurns(limit)
		var mu sync.Mutex
		var now, peak, ran int
		var wg sync.WaitGroup
		for i := range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				release, err := l.acquire(context.Background(), i, nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				now++
				ran++
				peak = max(peak, now)
				mu.Unlock()
				time.Sleep(time.Millisecond) // hold it a while: let others pile up
				mu.Lock()
				now--
				mu.Unlock()
				release()
			}()
		}
		wg.Wait()
		if peak > limit || ran != 40 {
			t.Errorf("limit %d: peak %d at once, %d of 40 ran", limit, peak, ran)
		}
	}
}

// TestLadderTurnsCancel: a waiter whose context ends leaves the queue with
// ctx's error and holds no turn; the waiters behind it move up; a raised
// limit grants waiters at once.
func TestLadderTurnsCancel(t *testing.T) {
	l := newLadderTurns(1)
	hold, err := l.acquire(context.Background(), "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := acquireAsync(t, l, ctx, "b")
	c := acquireAsync(t, l, context.Background(), "c")
	cancel()
	if rel := <-b; rel != nil {
		t.Fatal("a cancelled waiter got a turn")
	}
	if _, ok := l.ahead("b"); ok {
		t.Error("the cancelled waiter is still queued")
	}
	if n, ok := l.ahead("c"); !ok || n != 0 {
		t.Errorf("ahead(c) = %d, %v; want 0", n, ok)
	}
	l.setLimit(2) // c starts now, beside a
	relC := <-c
	if relC == nil {
		t.Fatal("c got no turn after the limit was raised")
	}
	if r, w := l.counts(); r != 2 || w != 0 {
		t.Errorf("counts %d, %d; want 2 running, 0 waiting", r, w)
	}
	hold()
	relC()
	done, stop := context.WithCancel(context.Background())
	stop()
	l2 := newLadderTurns(1)
	keep, _ := l2.acquire(context.Background(), "x", nil)
	if _, err := l2.acquire(done, "y", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("an ended context: %v, want context.Canceled", err)
	}
	keep()
	if r, w := l2.counts(); r != 0 || w != 0 {
		t.Errorf("after cancel and release: %d running, %d waiting", r, w)
	}
}

// TestLadderTurnsLowerLimit: a lowered limit lets the running ladders
// finish and grants no new turn until they are below it; 0 or less is 1.
func TestLadderTurnsLowerLimit(t *testing.T) {
	l := newLadderTurns(0)
	if l.limit != 1 {
		t.Fatalf("limit 0 read as %d, want 1", l.limit)
	}
	l.setLimit(2)
	r1, _ := l.acquire(context.Background(), 1, nil)
	r2, _ := l.acquire(context.Background(), 2, nil)
	l.setLimit(1)
	w := acquireAsync(t, l, context.Background(), "3")
	r1()
	select {
	case <-w:
		t.Fatal("granted while 1 ladder still runs at limit 1")
	default:
	}
	r2()
	if rel := <-w; rel == nil {
		t.Fatal("no turn after both released")
	} else {
		rel()
	}
}
