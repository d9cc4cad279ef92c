package protocol

import (
	"github.com/llmprobe/llmprobe/internal/ledger"
)

// usageDeltas derives per-event output token counts from cumulative usage
// reported on content events (vendor per-chunk usage). It never guesses:
// once a content event arrives without usage, the stream is not reporting
// per-chunk usage and no further per-event counts are derived.
type usageDeltas struct {
	prev   int
	broken bool
}

// tokens returns the output tokens a content event carried (0 = unknown)
// given the cumulative completion count it reported (u may be nil).
func (d *usageDeltas) tokens(content bool, u *ledger.Usage) int {
	if !content {
		if u != nil && u.Known && u.Completion >= d.prev {
			d.prev = u.Completion
		}
		return 0
	}
	if u == nil || !u.Known || d.broken {
		d.broken = true
		return 0
	}
	n := u.Completion - d.prev
	if n <= 0 {
		if n < 0 {
			d.broken = true
		}
		return 0
	}
	d.prev = u.Completion
	return n
}
