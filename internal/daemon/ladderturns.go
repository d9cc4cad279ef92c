package daemon

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/statuspage"
	"github.com/llmprobe/llmprobe/internal/telemetry"
)

// ladderTurns lets at most limit ladders run at once on this prober
// (limits.max_concurrent_ladders); the others wait their turn in the order
// they became due (FIFO), so many targets whose ladders fall due together
// take turns instead of starving the prober at the top of the hour. A
// waiter whose context ends leaves the queue (reload, shutdown).
type ladderTurns struct {
	mu      sync.Mutex
	limit   int
	running int
	queue   []*turn
}

// turn is one ladder waiting for its turn; ready is closed when it is
// granted one.
type turn struct {
	key     any
	ready   chan struct{}
	granted bool
}

// newLadderTurns returns a limiter letting limit ladders run at once (at
// least one).
func newLadderTurns(limit int) *ladderTurns {
	return &ladderTurns{limit: max(limit, 1)}
}

// acquire waits for a turn for the ladder named by key (a comparable value
// that identifies it while it waits, for ahead). It returns release, to be
// called once the ladder is over, or ctx's error when ctx ended first:
// then the ladder holds no turn and left the queue.
// queued, when not nil, is called (outside the lock) when the ladder has
// to wait, with how many wait before it.
func (l *ladderTurns) acquire(ctx context.Context, key any, queued func(ahead int)) (release func(), err error) {
	l.mu.Lock()
	if l.running < l.limit && len(l.queue) == 0 {
		l.running++
		l.mu.Unlock()
		return l.releaser(), nil
	}
	w := &turn{key: key, ready: make(chan struct{})}
	l.queue = append(l.queue, w)
	ahead := len(l.queue) - 1
	l.mu.Unlock()
	if queued != nil {
		queued(ahead)
	}
	select {
	case <-w.ready:
		return l.releaser(), nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	if w.granted { // granted as ctx ended: hand the turn on
		l.running--
		l.grant()
	} else {
		l.queue = slices.DeleteFunc(l.queue, func(q *turn) bool { return q == w })
	}
	l.mu.Unlock()
	return nil, ctx.Err()
}

// releaser returns the function that gives a turn back (idempotent).
func (l *ladderTurns) releaser() func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.running--
			l.grant()
			l.mu.Unlock()
		})
	}
}

// grant hands free turns to the longest waiters (l.mu held).
func (l *ladderTurns) grant() {
	for l.running < l.limit && len(l.queue) > 0 {
		w := l.queue[0]
		l.queue = l.queue[1:]
		w.granted = true
		l.running++
		close(w.ready)
	}
}

// setLimit changes how many ladders may run at once (a reload); a higher
// limit lets waiters start now, a lower one lets the running finish.
func (l *ladderTurns) setLimit(limit int) {
	l.mu.Lock()
	l.limit = max(limit, 1)
	l.grant()
	l.mu.Unlock()
}

// counts are the ladders running and waiting now.
func (l *ladderTurns) counts() (running, waiting int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running, len(l.queue)
}

// ahead is how many ladders wait before key's; ok is false when key is
// not waiting.
func (l *ladderTurns) ahead(key any) (n int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, w := range l.queue {
		if w.key == key {
			return i, true
		}
	}
	return 0, false
}

// queuedLadder is a target's ladder waiting its turn: what triggered it
// (kept: it runs as that trigger when its turn comes) and since when.
type queuedLadder struct {
	trigger string
	since   time.Time
}

// takeTurn waits for the ladder's turn among the prober's ladders
// (limits.max_concurrent_ladders); the error is ctx's when the run was
// stopped (reload, shutdown) while it waited.
func (r *targetRun) takeTurn(ctx context.Context, d *Daemon, trigger string) (release func(), err error) {
	since := d.now()
	waited := false
	release, err = d.turns.acquire(ctx, r, func(ahead int) {
		waited = true
		r.mu.Lock()
		r.queued = &queuedLadder{trigger: trigger, since: since}
		r.mu.Unlock()
		d.log.Info("ladder queued: waiting its turn", "target", r.name, "trigger", trigger, "ahead", ahead,
			"max_concurrent_ladders", r.global.Limits.MaxConcurrentLadders)
	})
	r.mu.Lock()
	r.queued = nil
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if waited {
		d.log.Info("ladder's turn came", "target", r.name, "trigger", trigger, "waited", d.now().Sub(since).Round(time.Millisecond))
	}
	return release, nil
}

// queuedFact is the target's ladder waiting its turn, for the status page
// (nil: none waits).
func (r *targetRun) queuedFact(d *Daemon) *statuspage.LadderQueued {
	r.mu.Lock()
	q := r.queued
	r.mu.Unlock()
	if q == nil {
		return nil
	}
	ahead, ok := d.turns.ahead(r)
	if !ok {
		return nil
	}
	return &statuspage.LadderQueued{Ahead: ahead, Trigger: q.trigger, Since: q.since}
}

// ladderCounts are the ladders running and waiting now (the
// llmprobe_ladders_* gauges).
func (d *Daemon) ladderCounts() telemetry.LadderTurns {
	running, waiting := d.turns.counts()
	return telemetry.LadderTurns{Running: running, Waiting: waiting}
}
