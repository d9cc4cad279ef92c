package daemon

import (
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/slo"
	"github.com/llmprobe/llmprobe/internal/statuspage"
)

// checkTally counts a target's answer checks (ledger.Record.Check) in
// one-minute slots over the status page's hour, per class, check and the
// target's identity when the result came in: the facts of the card's
// WRONG ANSWERS (statuspage.Answers), over the first page tier's windows
// as the correctness rules count them (every traffic; not_judged apart).
// Bounded: at most maxCheckKeys keys × 60 slots; a check's name comes
// from the configuration, never from the server.
type checkTally struct {
	mu   sync.Mutex
	keys map[checkKey]*[60]checkSlot
}

// maxCheckKeys bounds the (class, check, identity) keys kept; a target
// whose identity flaps keeps the keys it saw first within the hour.
const maxCheckKeys = 256

type checkKey struct {
	class, check   string
	model, version string
}

type checkSlot struct {
	minute                int64
	pass, fail, notJudged int
	// reasons counts the fails by reason: a closed set (answercheck's
	// judge sets it, never the server), made on the first fail.
	reasons map[string]int
}

// record counts rec's check at now under identity id (zero: not known).
func (c *checkTally) record(now time.Time, rec *ledger.Record, id ladderresult.Identity) {
	if rec.Check == nil {
		return
	}
	k := checkKey{class: rec.Class, check: rec.Check.Name, model: id.Model, version: id.Version}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil {
		c.keys = map[checkKey]*[60]checkSlot{}
	}
	m := now.Unix() / 60
	ring, ok := c.keys[k]
	if !ok {
		if len(c.keys) >= maxCheckKeys {
			c.evict(m)
		}
		if len(c.keys) >= maxCheckKeys {
			return
		}
		ring = &[60]checkSlot{}
		c.keys[k] = ring
	}
	s := &ring[m%int64(len(ring))]
	if s.minute != m {
		*s = checkSlot{minute: m}
	}
	switch string(rec.Check.Result) {
	case slo.CheckPass:
		s.pass++
	case slo.CheckFail:
		s.fail++
		if rec.Check.Reason == "" {
			break
		}
		if s.reasons == nil {
			s.reasons = map[string]int{}
		}
		s.reasons[string(rec.Check.Reason)]++
	default:
		s.notJudged++
	}
}

// evict drops the keys with no result in the last hour (before minute m).
func (c *checkTally) evict(m int64) {
	for k, ring := range c.keys {
		live := false
		for _, s := range ring {
			live = live || (s.minute > m-int64(len(ring)) && s.pass+s.fail+s.notJudged > 0)
		}
		if !live {
			delete(c.keys, k)
		}
	}
}

// window sums each key's last d (whole minutes, the current one
// included), keys without a result left out.
func (c *checkTally) window(now time.Time, d time.Duration) []statuspage.CheckCount {
	n := min(max(int((d+time.Minute-1)/time.Minute), 1), 60)
	m := now.Unix() / 60
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []statuspage.CheckCount
	for k, ring := range c.keys {
		cc := statuspage.CheckCount{Class: k.class, Check: k.check, Identity: statuspage.IdentityOf{Model: k.model, Version: k.version}}
		for j := int64(0); j < int64(n); j++ {
			s := ring[(m-j)%int64(len(ring))]
			if s.minute != m-j {
				continue
			}
			cc.Pass, cc.Fail, cc.NotJudged = cc.Pass+s.pass, cc.Fail+s.fail, cc.NotJudged+s.notJudged
			for r, k := range s.reasons {
				if cc.Reasons == nil {
					cc.Reasons = map[string]int{}
				}
				cc.Reasons[r] += k
			}
		}
		if cc.Pass+cc.Fail+cc.NotJudged > 0 {
			out = append(out, cc)
		}
	}
	return out
}

// answers are the tally over the first page tier's windows (nil when no
// check ran in the long one).
func (c *checkTally) answers(now time.Time) *statuspage.Answers {
	page := slo.PageTiers()[0]
	long := c.window(now, page.Long)
	if len(long) == 0 {
		return nil
	}
	return &statuspage.Answers{Short: c.window(now, page.Short), Long: long}
}
