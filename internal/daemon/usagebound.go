package daemon

import (
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// boundUsage wraps params so that every request built tells the target's
// budget the most it can cost (its prompt estimate + its max tokens): the
// budget charges that bound when the server's usage for it cannot be true.
func (r *targetRun) boundUsage(params func(*ledger.Record) protocol.Params) func(*ledger.Record) protocol.Params {
	return func(rec *ledger.Record) protocol.Params {
		p := params(rec)
		if b := r.state.budget.Load(); b != nil {
			b.Bound(rec.ID, workload.UsageBound(p))
		}
		return p
	}
}

// usageLog rate-limits the line that says a response's usage was refused
// and its bound charged: the first at once, then at most one summary an
// interval (a server that always reports nonsense would log every request).
type usageLog struct {
	mu     sync.Mutex
	last   time.Time
	n      int   // refused since the last line
	tokens int64 // their bounds
}

// observe counts one refused usage charged bound tokens at now, and
// returns the counts for a line when one is due.
func (u *usageLog) observe(now time.Time, every time.Duration, bound int64) (n int, tokens int64, due bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.n++
	u.tokens += bound
	if !u.last.IsZero() && now.Sub(u.last) < every {
		return 0, 0, false
	}
	n, tokens = u.n, u.tokens
	u.last, u.n, u.tokens = now, 0, 0
	return n, tokens, true
}

// logInvalidUsage says that rec's usage could not be true and that the
// budget was charged bound tokens for it instead.
func (r *targetRun) logInvalidUsage(d *Daemon, rec *ledger.Record, bound int64) {
	every := d.opts.FailureLogEvery
	if every <= 0 {
		every = defaultFailureLogEvery
	}
	n, tokens, due := r.state.usageLog.observe(d.now(), every, bound)
	if !due {
		return
	}
	d.log.Warn("usage refused as impossible: budget charged the request's upper bound (prompt estimate + max tokens)",
		"target", r.name, "class", rec.Class, "tokens_charged", bound, "refused_since_last_line", n, "tokens_since_last_line", tokens)
}
