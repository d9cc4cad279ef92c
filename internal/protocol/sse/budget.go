package sse

import (
	"errors"
	"sync/atomic"
)

// ErrBudget is returned when buffering an event (or a line) would take the
// bytes buffered by every Reader sharing a Budget past its limit. The
// Reader stays in error afterwards; its stream is lost, the others go on.
var ErrBudget = errors.New("sse: process-wide bound on buffered event bytes reached")

// FreeBytes is what a Reader buffers without charging its Budget: a stream
// whose events and lines stay within it (nearly every stream) never
// touches the shared counter. Past it, a Reader charges everything it
// buffers, in steps of FreeBytes, up to its high-water mark, until Reset.
const FreeBytes = 16 << 10

// Budget is a bound on the bytes buffered for events across every Reader
// that shares it (one per process). It is safe for concurrent use; the nil
// *Budget is unbounded.
type Budget struct {
	limit atomic.Int64
	used  atomic.Int64
}

// NewBudget returns a Budget of limit bytes; limit ≤ 0 returns nil
// (unbounded).
func NewBudget(limit int64) *Budget {
	if limit <= 0 {
		return nil
	}
	b := &Budget{}
	b.limit.Store(limit)
	return b
}

// Limit returns the bound in bytes (0 for the nil, unbounded Budget).
func (b *Budget) Limit() int64 {
	if b == nil {
		return 0
	}
	return b.limit.Load()
}

// SetLimit changes the bound (a reload); limit ≤ 0 is ignored. Bytes
// already buffered stay charged; a lower bound applies to growth from now.
func (b *Budget) SetLimit(limit int64) {
	if b != nil && limit > 0 {
		b.limit.Store(limit)
	}
}

// Used returns the bytes currently charged.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// reserve charges n bytes, or reports false when that would pass the limit.
func (b *Budget) reserve(n int64) bool {
	if b == nil {
		return true
	}
	for {
		u := b.used.Load()
		if u+n > b.limit.Load() {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

func (b *Budget) release(n int64) {
	if b != nil && n > 0 {
		b.used.Add(-n)
	}
}
