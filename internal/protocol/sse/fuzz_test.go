package sse

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "data: a\r\n\r\n", "data: a\r\r", ": c\n\ndata:x\ndata: y\n\n",
		"event: e\ndata: {}\n\ndata: [DONE]\n\n", "\xEF\xBB\xBFdata: a\n\n", "data: a\r",
		"id: 1\nretry: 5\nfoo\n\n", "data: " + string(make([]byte, 80)) + "\n\n",
	} {
		f.Add([]byte(s), uint64(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		const max = 64
		whole := NewReader(bytes.NewReader(in), Options{MaxEventBytes: max})
		want, wantErr := readAll(t, whole)
		for _, e := range want {
			if len(e.Data) > max {
				t.Fatalf("event of %d bytes passed bound %d", len(e.Data), max)
			}
		}
		if m := whole.MemoryBytes(); m > 4*(max+lineSlack)+bufSize {
			t.Fatalf("memory %d over bound", m)
		}
		for _, src := range []io.Reader{
			iotest.OneByteReader(bytes.NewReader(in)),
			&splitReader{b: in, rng: rand.New(rand.NewPCG(seed, seed^0x9e37)), max: 9},
		} {
			r := NewReader(src, Options{MaxEventBytes: max})
			got, err := readAll(t, r)
			if !sameErr(err, wantErr) {
				t.Fatalf("split delivery: error %v, whole delivery: %v", err, wantErr)
			}
			if len(got) != len(want) {
				t.Fatalf("split delivery: %q, whole delivery: %q", got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("split delivery event %d: %q, whole: %q", i, got[i], want[i])
				}
			}
			if m := r.MemoryBytes(); m > 4*(max+lineSlack)+bufSize {
				t.Fatalf("memory %d over bound", m)
			}
		}
	})
}

func sameErr(a, b error) bool {
	for _, e := range []error{io.EOF, ErrIncomplete, ErrEventTooLarge} {
		if errors.Is(a, e) != errors.Is(b, e) {
			return false
		}
	}
	return true
}
