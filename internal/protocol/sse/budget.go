package sse

import (
	"errors"
	"fmt"
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

// BudgetForEvent is the least Budget in which one stream reads an event of
// maxEvent bytes (its MaxEventBytes) sent as one data line: the line and
// the joined data are both held until the event is dispatched, charged in
// steps of FreeBytes.
func BudgetForEvent(maxEvent int) int64 {
	return 2*int64(maxEvent) + FreeBytes
}

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

// heldBytes returns the capacity of the buffers a stream grows (line, data,
// name, lastID): what the Reader holds for it beyond its fixed read buffer.
func (r *Reader) heldBytes() int {
	return cap(r.line) + cap(r.data) + cap(r.name) + cap(r.lastID)
}

// grow returns b (one of the Reader's buffers) with room for n more bytes,
// never more capacity than limit unless len(b)+n needs it. Growing is
// charged before the new buffer is made: the Budget covers the capacity of
// every buffer the stream holds (ErrBudget when it cannot).
func (r *Reader) grow(b []byte, n, limit int) ([]byte, error) {
	need := len(b) + n
	if need <= cap(b) {
		return b, nil
	}
	c := 2 * cap(b)
	if cap(b) >= 256<<10 {
		c = cap(b) + cap(b)/4
	}
	c = max(min(max(c, 64), limit), need)
	if err := r.charge(r.heldBytes() - cap(b) + c); err != nil {
		return b, err
	}
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb, nil
}

// appendTo appends parts to the buffer *b, growing it by grow.
func (r *Reader) appendTo(b *[]byte, limit int, parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	nb, err := r.grow(*b, n, limit)
	if err != nil {
		return err
	}
	for _, p := range parts {
		nb = append(nb, p...)
	}
	*b = nb
	return nil
}

// charge makes sure the Budget covers n held bytes (the capacity of line,
// data, name and lastID together): within FreeBytes nothing is charged;
// past it the stream's high-water mark is, rounded up to FreeBytes, and
// kept until Reset.
func (r *Reader) charge(n int) error {
	if r.budget == nil || n <= FreeBytes || int64(n) <= r.held {
		return nil
	}
	want := (int64(n) + FreeBytes - 1) / FreeBytes * FreeBytes
	if !r.budget.reserve(want - r.held) {
		return fmt.Errorf("%w (%d bytes)", ErrBudget, r.budget.Limit())
	}
	r.held = want
	return nil
}
