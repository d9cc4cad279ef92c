package sse

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestBudgetBoundsEveryReader (issue 8, defect 7): Readers sharing a Budget
// together buffer no more than its limit. A stream that would pass it gets
// ErrBudget (and only that stream); small events never touch the shared
// counter; what a stream charged is released at Reset.
func TestBudgetBoundsEveryReader(t *testing.T) {
	// A 40 KiB event on one line holds about 104 KiB (the line as it
	// arrived, then its data): one fits in 128 KiB, two do not.
	b := NewBudget(128 << 10)
	big := "data: " + strings.Repeat("x", 40<<10) + "\n\n"
	small := strings.Repeat("data: {\"a\":1}\n\n", 100)

	quiet := NewReader(strings.NewReader(small), Options{Budget: b})
	for {
		if _, err := quiet.Next(); err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
	}
	if b.Used() != 0 {
		t.Fatalf("small events charged %d bytes, want 0", b.Used())
	}

	// Each stream is stopped after its big event, still holding it, the way
	// streams that have not finished hold their buffers.
	first := NewReader(strings.NewReader(big+big), Options{Budget: b})
	if _, err := first.Next(); err != nil {
		t.Fatalf("first stream: %v", err)
	}
	if u, held := b.Used(), int64(first.MemoryBytes()-bufSize); u < held || u >= held+FreeBytes {
		t.Fatalf("used %d after a 40 KiB event, want what the reader holds (%d) rounded up", u, held)
	}
	second := NewReader(strings.NewReader(big), Options{Budget: b})
	_, err := second.Next()
	if !errors.Is(err, ErrBudget) {
		t.Fatalf("second stream: %v, want ErrBudget (the bound would be passed)", err)
	}
	if _, again := second.Next(); !errors.Is(again, ErrBudget) {
		t.Errorf("error not sticky: %v", again)
	}
	if _, err := first.Next(); err != nil {
		t.Errorf("the first stream goes on: %v", err)
	}
	first.Reset(nil, Options{})
	second.Reset(strings.NewReader(big), Options{Budget: b})
	if _, err := second.Next(); err != nil {
		t.Errorf("after the first stream ended: %v, want room again", err)
	}
	second.Reset(nil, Options{})
	if b.Used() != 0 {
		t.Errorf("used %d after every stream ended, want 0", b.Used())
	}
}

// TestBudgetCountsLongLines: a line that spans reads is charged as it is
// buffered, before it becomes an event.
func TestBudgetCountsLongLines(t *testing.T) {
	b := NewBudget(32 << 10)
	r := NewReader(io.MultiReader(strings.NewReader("data: "+strings.Repeat("y", 100<<10)), neverEnds{}), Options{Budget: b, MaxEventBytes: 1 << 20})
	if _, err := r.Next(); !errors.Is(err, ErrBudget) {
		t.Fatalf("err %v, want ErrBudget while the line is still arriving", err)
	}
	r.Reset(nil, Options{})
	if b.Used() != 0 {
		t.Errorf("used %d after Reset", b.Used())
	}
}

// TestBudgetCountsManyShortLines: an event made of many short data lines,
// none of which spans a read, is charged as its data grows: the bound holds
// for the event, not only for long lines.
func TestBudgetCountsManyShortLines(t *testing.T) {
	// 512-byte lines: eight fill each 4 KiB read exactly, so no line spans
	// two reads.
	line := "data: " + strings.Repeat("z", 512-len("data: ")-1) + "\n"
	if len(line) != 512 || bufSize%len(line) != 0 {
		t.Fatalf("line of %d bytes does not divide the %d-byte read buffer", len(line), bufSize)
	}
	b := NewBudget(64 << 10)
	r := NewReader(io.MultiReader(strings.NewReader(strings.Repeat(line, 2048)), neverEnds{}), Options{Budget: b, MaxEventBytes: 2 << 20})
	if _, err := r.Next(); !errors.Is(err, ErrBudget) {
		t.Fatalf("err %v, want ErrBudget before the 1 MiB event is complete", err)
	}
	if u := b.Used(); u > 64<<10 {
		t.Errorf("used %d, over the bound", u)
	}
	r.Reset(nil, Options{})
	if b.Used() != 0 {
		t.Errorf("used %d after Reset", b.Used())
	}
}

// TestBudgetCountsHeldMemory: the Budget covers what a Reader holds (the
// capacity of its line and data buffers together), not the length of the
// event. A 150 KiB event that arrives as one line over many reads is held
// twice (the line, then its data) plus growth room: with a 256 KiB Budget
// it ends with ErrBudget, and at no read does the Reader hold more than
// it has charged, nor the Budget pass its limit. The same event within a
// budget that covers it is read whole.
func TestBudgetCountsHeldMemory(t *testing.T) {
	const limit = 256 << 10
	event := "data: " + strings.Repeat("w", 150<<10) + "\n\n"
	tests := []struct {
		name  string
		limit int64
		want  error
	}{
		{"held memory over the bound", limit, ErrBudget},
		{"held memory within the bound", 2 * limit, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBudget(tt.limit)
			var r *Reader
			check := func(when string) {
				t.Helper()
				held := int64(r.MemoryBytes() - bufSize)
				if held > FreeBytes && held > b.Used() {
					t.Fatalf("%s: the reader holds %d bytes, %d charged", when, held, b.Used())
				}
				if u := b.Used(); u > b.Limit() {
					t.Fatalf("%s: %d bytes charged, over the %d bound", when, u, b.Limit())
				}
				if m := r.MemoryBytes(); m > bufSize+int(b.Limit()) {
					t.Fatalf("%s: MemoryBytes %d, over the bound %d and the read buffer", when, m, b.Limit())
				}
			}
			reads := 0
			src := readFunc(func(p []byte) (int, error) {
				check(fmt.Sprintf("read %d", reads))
				reads++
				return strings.NewReader(event).ReadAt(p, int64(reads-1)*int64(len(p)))
			})
			r = NewReader(src, Options{Budget: b, MaxEventBytes: 1 << 20})
			ev, err := r.Next()
			check("after Next")
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if tt.want == nil && len(ev.Data) != 150<<10 {
				t.Errorf("event of %d bytes, want %d", len(ev.Data), 150<<10)
			}
			if tt.want != nil && !strings.Contains(err.Error(), fmt.Sprint(tt.limit)) {
				t.Errorf("error %q does not name the bound", err)
			}
			r.Reset(nil, Options{})
			if b.Used() != 0 {
				t.Errorf("used %d after Reset", b.Used())
			}
			if m := r.MemoryBytes(); m > bufSize+FreeBytes {
				t.Errorf("a reset reader keeps %d bytes, over the read buffer and FreeBytes (charged to nobody)", m)
			}
		})
	}
}

// readFunc is an io.Reader made of a function.
type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

func TestNilBudgetIsUnbounded(t *testing.T) {
	var b *Budget
	if NewBudget(0) != nil || b.Limit() != 0 || b.Used() != 0 || !b.reserve(1<<40) {
		t.Error("a nil budget must be unbounded")
	}
}

// neverEnds is a source that has nothing more (and never says EOF).
type neverEnds struct{}

func (neverEnds) Read([]byte) (int, error) { return 0, io.ErrNoProgress }

// TestBudgetForEvent: a Budget of BudgetForEvent(E) reads an event of E
// bytes sent as one data line, in small reads; one FreeBytes step less
// does not (the rule config validation holds max_buffered_bytes to).
func TestBudgetForEvent(t *testing.T) {
	for _, e := range []int{64 << 10, 1 << 20} {
		ev := "data: " + strings.Repeat("x", e) + "\n\n"
		read := func(limit int64) error {
			r := NewReader(iotest.HalfReader(strings.NewReader(ev)), Options{MaxEventBytes: e, Budget: NewBudget(limit)})
			_, err := r.Next()
			return err
		}
		if err := read(BudgetForEvent(e)); err != nil {
			t.Errorf("event of %d bytes in BudgetForEvent %d: %v", e, BudgetForEvent(e), err)
		}
		if err := read(BudgetForEvent(e) - FreeBytes); !errors.Is(err, ErrBudget) {
			t.Errorf("event of %d bytes in %d: %v, want ErrBudget", e, BudgetForEvent(e)-FreeBytes, err)
		}
	}
}
