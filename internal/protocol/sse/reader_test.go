package sse

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

type ev struct {
	Name, Data string
}

// readAll drains r, copying each event (Data is only valid until Next).
func readAll(t testing.TB, r *Reader) ([]ev, error) {
	t.Helper()
	var out []ev
	for i := 0; ; i++ {
		if i > 1<<20 {
			t.Fatal("reader did not stop")
		}
		e, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev{e.Name, string(e.Data)})
	}
}

// splitReader returns the input in pieces of random length (seeded).
type splitReader struct {
	b   []byte
	rng *rand.Rand
	max int
}

func (s *splitReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := 1 + s.rng.IntN(s.max)
	n = min(n, len(p), len(s.b))
	copy(p, s.b[:n])
	s.b = s.b[n:]
	return n, nil
}

func deliveries(in string) map[string]io.Reader {
	b := []byte(in)
	return map[string]io.Reader{
		"whole":     bytes.NewReader(b),
		"bytewise":  iotest.OneByteReader(bytes.NewReader(b)),
		"half":      iotest.HalfReader(bytes.NewReader(b)),
		"data+eof":  iotest.DataErrReader(bytes.NewReader(b)),
		"random-1":  &splitReader{b: b, rng: rand.New(rand.NewPCG(1, 2)), max: 7},
		"random-2":  &splitReader{b: b, rng: rand.New(rand.NewPCG(3, 4)), max: 3},
		"random-64": &splitReader{b: b, rng: rand.New(rand.NewPCG(5, 6)), max: 64},
	}
}

func TestReader(t *testing.T) {
	big := strings.Repeat("x", 100)
	tests := []struct {
		name    string
		in      string
		max     int
		want    []ev
		wantErr error
	}{
		{name: "lf", in: "data: a\n\ndata: b\n\n", want: []ev{{"", "a"}, {"", "b"}}, wantErr: io.EOF},
		{name: "crlf", in: "data: a\r\n\r\ndata: b\r\n\r\n", want: []ev{{"", "a"}, {"", "b"}}, wantErr: io.EOF},
		{name: "cr only", in: "data: a\r\rdata: b\r\r", want: []ev{{"", "a"}, {"", "b"}}, wantErr: io.EOF},
		{name: "mixed line ends", in: "data: a\r\ndata: b\rdata: c\n\r\n", want: []ev{{"", "a\nb\nc"}}, wantErr: io.EOF},
		{name: "multi-line data", in: "data: one\ndata: two\ndata:\ndata:  three\n\n", want: []ev{{"", "one\ntwo\n\n three"}}, wantErr: io.EOF},
		{name: "space stripped once", in: "data:  x\n\ndata:y\n\n", want: []ev{{"", " x"}, {"", "y"}}, wantErr: io.EOF},
		{name: "event name", in: "event: delta\ndata: {}\n\ndata: plain\n\n", want: []ev{{"delta", "{}"}, {"", "plain"}}, wantErr: io.EOF},
		{name: "event name reset without data", in: "event: ping\n\ndata: x\n\n", want: []ev{{"", "x"}}, wantErr: io.EOF},
		{name: "comments and keep-alives", in: ": hello\n\n:\n\n\n\ndata: x\n: mid-event comment\n\n", want: []ev{{"", "x"}}, wantErr: io.EOF},
		{name: "comment only stream", in: ": ping\n\n: ping\n\n", wantErr: io.EOF},
		{name: "empty stream", in: "", wantErr: io.EOF},
		{name: "unknown fields and retry ignored", in: "retry: 10\nfoo: bar\nnocolon\ndata: x\n\n", want: []ev{{"", "x"}}, wantErr: io.EOF},
		{name: "field without colon is data with empty value", in: "data\n\n", want: []ev{{"", ""}}, wantErr: io.EOF},
		{name: "unterminated final event discarded", in: "data: a\n\ndata: b\n", want: []ev{{"", "a"}}, wantErr: ErrIncomplete},
		{name: "unterminated final line discarded", in: "data: a\n\ndata: [DONE]", want: []ev{{"", "a"}}, wantErr: ErrIncomplete},
		{name: "trailing comment line is not incomplete", in: "data: a\n\n: bye", want: []ev{{"", "a"}}, wantErr: io.EOF},
		{name: "bom stripped once", in: "\xEF\xBB\xBFdata: a\n\n\xEF\xBB\xBFdata: b\n\n", want: []ev{{"", "a"}}, wantErr: io.EOF},
		{name: "colon in value kept", in: "data: {\"a\":\"b: c\"}\n\n", want: []ev{{"", `{"a":"b: c"}`}}, wantErr: io.EOF},
		{name: "event at bound", in: "data: " + big + "\n\n", max: 100, want: []ev{{"", big}}, wantErr: io.EOF},
		{name: "multi-line event at bound", in: "data: " + big[:49] + "\ndata: " + big[:50] + "\n\n", max: 100, want: []ev{{"", big[:49] + "\n" + big[:50]}}, wantErr: io.EOF},
		{name: "event over bound", in: "data: ok\n\ndata: " + big + "x\n\n", max: 100, want: []ev{{"", "ok"}}, wantErr: ErrEventTooLarge},
		{name: "many lines over bound", in: "data: ok\n\n" + strings.Repeat("data: "+big[:30]+"\n", 5) + "\n", max: 100, want: []ev{{"", "ok"}}, wantErr: ErrEventTooLarge},
		{name: "endless line over bound", in: "data: ok\n\nfoo" + strings.Repeat(big, 5), max: 100, want: []ev{{"", "ok"}}, wantErr: ErrEventTooLarge},
		{name: "long comment skipped", in: ":" + strings.Repeat(big, 10) + "\ndata: x\n\n", max: 100, want: []ev{{"", "x"}}, wantErr: io.EOF},
	}
	for _, tt := range tests {
		for how, src := range deliveries(tt.in) {
			t.Run(tt.name+"/"+how, func(t *testing.T) {
				activity := 0
				r := NewReader(src, Options{MaxEventBytes: tt.max, Activity: func(n int) { activity += n }})
				got, err := readAll(t, r)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error = %v, want %v", err, tt.wantErr)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("events = %q, want %q", got, tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("event %d = %q, want %q", i, got[i], tt.want[i])
					}
				}
				if tt.wantErr == io.EOF && activity != len(tt.in) {
					t.Errorf("activity reported %d bytes, stream has %d", activity, len(tt.in))
				}
				if _, err2 := r.Next(); !errors.Is(err2, tt.wantErr) {
					t.Errorf("error not sticky: %v then %v", err, err2)
				}
			})
		}
	}
}

func TestReaderLastEventID(t *testing.T) {
	r := NewReader(strings.NewReader("id: 1\ndata: a\n\nid\ndata: b\n\nid: x\x00y\ndata: c\n\n"), Options{})
	want := []string{"1", "", ""}
	for i, w := range want {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		if got := r.LastEventID(); got != w {
			t.Errorf("event %d: last id %q, want %q", i, got, w)
		}
	}
}

func TestReaderSourceError(t *testing.T) {
	boom := errors.New("boom")
	src := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom))
	r := NewReader(src, Options{})
	got, err := readAll(t, r)
	if !errors.Is(err, boom) || len(got) != 1 {
		t.Fatalf("got %q, %v; want one event then boom", got, err)
	}
}

func TestReaderActivityOnComments(t *testing.T) {
	calls := 0
	r := NewReader(iotest.OneByteReader(strings.NewReader(": ka\n\n")), Options{Activity: func(int) { calls++ }})
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("err = %v", err)
	}
	if calls != 6 {
		t.Errorf("activity calls = %d, want 6 (one per byte, comments included)", calls)
	}
}

func TestReaderReset(t *testing.T) {
	r := NewReader(strings.NewReader("id: 7\ndata: a\n\ndata: partial"), Options{})
	if _, err := readAll(t, r); err != ErrIncomplete {
		t.Fatalf("err = %v", err)
	}
	r.Reset(strings.NewReader("data: b\n\n"), Options{})
	got, err := readAll(t, r)
	if err != io.EOF || len(got) != 1 || got[0].Data != "b" || r.LastEventID() != "" {
		t.Fatalf("after reset: %q, %v, id %q", got, err, r.LastEventID())
	}
}

func TestReaderMemoryBounded(t *testing.T) {
	const max = 1000
	// A server that never ends a line, and one that sends endless data lines.
	for name, in := range map[string]string{
		"endless line": "data: " + strings.Repeat("y", 50*max),
		"endless data": strings.Repeat("data: "+strings.Repeat("z", 90)+"\n", 50*max/90),
		"endless name": "event: " + strings.Repeat("n", 50*max),
	} {
		t.Run(name, func(t *testing.T) {
			r := NewReader(iotest.HalfReader(strings.NewReader(in)), Options{MaxEventBytes: max})
			_, err := readAll(t, r)
			if !errors.Is(err, ErrEventTooLarge) {
				t.Fatalf("err = %v, want ErrEventTooLarge", err)
			}
			if m := r.MemoryBytes(); m > 4*(max+lineSlack)+bufSize {
				t.Errorf("memory %d over bound", m)
			}
		})
	}
}

func TestReaderAllocs(t *testing.T) {
	stream := []byte(strings.Repeat("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n: ka\n\n", 50))
	src := bytes.NewReader(stream)
	r := NewReader(src, Options{})
	// Warm the buffers once, then a whole stream must not allocate.
	readAll(t, r)
	allocs := testing.AllocsPerRun(20, func() {
		src.Reset(stream)
		r.Reset(src, Options{})
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	})
	if allocs > 0 {
		t.Errorf("%v allocations per stream, want 0", allocs)
	}
}

func BenchmarkReader(b *testing.B) {
	chunk := "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" token\"},\"finish_reason\":null}]}\n\n"
	stream := []byte(strings.Repeat(chunk, 256) + ": keep-alive\r\n\r\ndata: [DONE]\n\n")
	src := bytes.NewReader(stream)
	r := NewReader(src, Options{})
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(stream)
		r.Reset(src, Options{})
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}

// TestReaderErrorField: the non-standard `error:` field (llama.cpp's server,
// early 2025: `error: {…}` then `data: [DONE]`) is surfaced as an Error
// event, however the bytes arrive, instead of being ignored as an unknown
// field; its data lines are dropped and other unknown fields stay ignored.
func TestReaderErrorField(t *testing.T) {
	type errEv struct {
		Name, Data string
		Error      bool
	}
	big := strings.Repeat("x", 100)
	tests := []struct {
		name    string
		in      string
		max     int
		want    []errEv
		wantErr error
	}{
		{name: "llama.cpp early 2025", in: "data: {\"a\":1}\n\nerror: {\"code\":500,\"message\":\"m\"}\n\ndata: [DONE]\n\n",
			want: []errEv{{"", `{"a":1}`, false}, {"", `{"code":500,"message":"m"}`, true}, {"", "[DONE]", false}}, wantErr: io.EOF},
		{name: "crlf", in: "error: e\r\n\r\n", want: []errEv{{"", "e", true}}, wantErr: io.EOF},
		{name: "no space, no value", in: "error\n\nerror:x\n\n", want: []errEv{{"", "", true}, {"", "x", true}}, wantErr: io.EOF},
		{name: "data before and after dropped", in: "data: a\nerror: e1\ndata: b\nerror: e2\n\n", want: []errEv{{"", "e1\ne2", true}}, wantErr: io.EOF},
		{name: "with event name", in: "event: error\nerror: e\n\n", want: []errEv{{"error", "e", true}}, wantErr: io.EOF},
		{name: "flag does not leak to the next event", in: "error: e\n\ndata: d\n\n", want: []errEv{{"", "e", true}, {"", "d", false}}, wantErr: io.EOF},
		{name: "errors is not error", in: "errors: e\ndata: d\n\n", want: []errEv{{"", "d", false}}, wantErr: io.EOF},
		{name: "unterminated", in: "error: e\n", wantErr: ErrIncomplete},
		{name: "over bound", in: "error: " + big + "x\n\n", max: 100, wantErr: ErrEventTooLarge},
	}
	for _, tt := range tests {
		for how, src := range deliveries(tt.in) {
			t.Run(tt.name+"/"+how, func(t *testing.T) {
				r := NewReader(src, Options{MaxEventBytes: tt.max})
				var got []errEv
				var err error
				for {
					var e Event
					if e, err = r.Next(); err != nil {
						break
					}
					got = append(got, errEv{e.Name, string(e.Data), e.Error})
				}
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error = %v, want %v", err, tt.wantErr)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("events = %+v, want %+v", got, tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("event %d = %+v, want %+v", i, got[i], tt.want[i])
					}
				}
			})
		}
	}
}
