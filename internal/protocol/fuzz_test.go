package protocol

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol/sse"
)

// The fuzz targets feed a decoder a sequence of events and check it never
// panics, every error it returns carries a stream_error reason, and what it
// returns is internally sane. Seeds are every event of every fixture of the
// API (the seed corpus runs in plain `go test`). A longer session:
//
//	go test -fuzz=FuzzDecodeAnthropicMessages -fuzztime=10m ./internal/protocol/

// seedDecoder adds, for every fixture of api, the fixture's events as one
// input: event names and data joined as "name\x00data\x01…".
func seedDecoder(f *testing.F, api string) {
	n := 0
	for _, fx := range loadFixtures(f) {
		if fx.API != api {
			continue
		}
		rd := sse.NewReader(bytesReader(fx.Body), sse.Options{MaxEventBytes: 1 << 16})
		var in []byte
		for {
			e, err := rd.Next()
			if err != nil {
				break
			}
			in = append(in, e.Name...)
			in = append(in, 0)
			in = append(in, e.Data...)
			in = append(in, 1)
			f.Add(e.Name, append([]byte(nil), e.Data...), false) // each event alone, on a fresh decoder
		}
		f.Add("", in, true)
		n++
	}
	if n == 0 {
		f.Fatalf("no fixtures for %s", api)
	}
}

type byteReader struct{ b []byte }

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

func bytesReader(b []byte) io.Reader { return &byteReader{b} }

// splitSeq splits a "name\x00data\x01…" sequence back into events.
func splitSeq(in []byte) []sseEv {
	var out []sseEv
	for len(in) > 0 {
		end := len(in)
		for i, c := range in {
			if c == 1 {
				end = i
				break
			}
		}
		rec := in[:end]
		name, data := "", rec
		for i, c := range rec {
			if c == 0 {
				name, data = string(rec[:i]), rec[i+1:]
				break
			}
		}
		out = append(out, sseEv{name, string(data)})
		if end == len(in) {
			break
		}
		in = in[end+1:]
	}
	return out
}

func fuzzDecoder(f *testing.F, api string) {
	seedDecoder(f, api)
	f.Fuzz(func(t *testing.T, name string, data []byte, seq bool) {
		a, err := Lookup(api)
		if err != nil {
			t.Fatal(err)
		}
		d := a.NewDecoder()
		evs := []sseEv{{name, string(data)}}
		if seq {
			evs = splitSeq(data)
		}
		done := false
		for _, e := range evs {
			ev, err := d.Decode(e.name, []byte(e.data))
			if err != nil {
				r, ok := ReasonOf(err)
				if !ok {
					t.Fatalf("error without a ledger reason: %v", err)
				}
				if !ledger.Valid(ledger.StreamError, r) {
					t.Fatalf("reason %q is not a stream_error reason", r)
				}
				var re ReasonedError
				if !errors.As(err, &re) {
					t.Fatalf("error %T does not implement ReasonedError", err)
				}
				if len(err.Error()) > 200 {
					t.Fatalf("error text of %d bytes: errors must be short", len(err.Error()))
				}
				if done && r != ledger.ReasonDataAfterDone {
					t.Fatalf("after the terminal marker: reason %q, want data_after_done", r)
				}
				return
			}
			if ev.Tokens < 0 {
				t.Fatalf("negative token count %d", ev.Tokens)
			}
			if ev.Tokens > 0 && !ev.Content {
				t.Fatalf("tokens %d on an event without content", ev.Tokens)
			}
			if u := ev.Usage; u != nil {
				if u.Known == u.Invalid {
					t.Fatalf("usage %+v: known exactly when not invalid", *u)
				}
				for _, n := range []int{u.Prompt, u.Completion, u.Reasoning} {
					if n < 0 || n > ledger.MaxUsageTokens {
						t.Fatalf("usage %+v: a count outside [0, %d]", *u, ledger.MaxUsageTokens)
					}
				}
				// Cache counts are believed only within the prompt.
				r, w := u.CachedPrompt, u.CacheWrite
				if (r.Known || w.Known) && !u.Known {
					t.Fatalf("usage %+v: a cache count on an unknown usage", *u)
				}
				if r.Known && (r.N < 0 || r.N > u.Prompt) || w.Known && (w.N < 0 || w.N > u.Prompt) || r.Known && w.Known && r.N+w.N > u.Prompt {
					t.Fatalf("usage %+v: a cache count outside the prompt", *u)
				}
			}
			if done && len(bytes.TrimSpace([]byte(e.data))) > 0 && (ev != (Event{}) || string(bytes.TrimSpace([]byte(e.data))) != "[DONE]") {
				t.Fatalf("after the terminal marker an event was accepted: %+v", ev)
			}
			done = done || ev.Done
		}
	})
}

func FuzzDecodeOpenAIChat(f *testing.F)        { fuzzDecoder(f, APIOpenAIChat) }
func FuzzDecodeOpenAICompletions(f *testing.F) { fuzzDecoder(f, APIOpenAICompletions) }
func FuzzDecodeOpenAIResponses(f *testing.F)   { fuzzDecoder(f, APIOpenAIResponses) }
func FuzzDecodeAnthropicMessages(f *testing.F) { fuzzDecoder(f, APIAnthropicMessages) }
