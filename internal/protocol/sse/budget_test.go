package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestBudgetBoundsEveryReader (issue 8, defect 7): Readers sharing a Budget
// together buffer no more than its limit. A stream that would pass it gets
// ErrBudget (and only that stream); small events never touch the shared
// counter; what a stream charged is released at Reset.
func TestBudgetBoundsEveryReader(t *testing.T) {
	b := NewBudget(64 << 10)
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
	if u := b.Used(); u < 40<<10 || u > 64<<10 {
		t.Fatalf("used %d after a 40 KiB event, want its size rounded up", u)
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

func TestNilBudgetIsUnbounded(t *testing.T) {
	var b *Budget
	if NewBudget(0) != nil || b.Limit() != 0 || b.Used() != 0 || !b.reserve(1<<40) {
		t.Error("a nil budget must be unbounded")
	}
}

// neverEnds is a source that has nothing more (and never says EOF).
type neverEnds struct{}

func (neverEnds) Read([]byte) (int, error) { return 0, io.ErrNoProgress }
