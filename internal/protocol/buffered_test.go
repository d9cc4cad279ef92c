package protocol

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

func TestBufferedByIntermediaryRule(t *testing.T) {
	ms := time.Millisecond
	base := func(first, end time.Duration, events int) ledger.Record {
		return ledger.Record{Outcome: ledger.OK, Dispatched: 1, FirstContent: first, LastContent: end, End: end, ContentEvents: events}
	}
	withUsage := func(r ledger.Record, completion int) ledger.Record {
		r.Usage = ledger.Usage{Known: true, Completion: completion}
		return r
	}
	withTimings := func(r ledger.Record, predictedMS float64, invalid bool) ledger.Record {
		r.ServerTimings = &ledger.ServerTimings{PredictedMS: predictedMS, Invalid: invalid}
		return r
	}
	tests := []struct {
		name string
		rec  ledger.Record
		want bool
	}{
		{"burst of 32 events, pace floor says 155ms", base(700*ms, 701*ms, 32), true},
		{"32 events at 20ms each", base(60*ms, 680*ms, 32), false},
		{"burst, server timings say 2s", withTimings(base(2100*ms, 2102*ms, 8), 2000, false), true},
		{"burst, server timings say 50ms: too short to judge", withTimings(base(100*ms, 101*ms, 30), 50, false), false},
		{"refused server timings fall back to the floor", withTimings(base(700*ms, 701*ms, 32), 0, true), true},
		{"burst of 100 tokens in 4 events (usage)", withUsage(base(900*ms, 905*ms, 4), 100), true},
		{"2 events: nothing to judge", withUsage(base(900*ms, 900*ms, 2), 100), false},
		{"burst of 10 events: 45ms floor, too short", base(300*ms, 300*ms, 10), false},
		{"span just above a twentieth of 155ms", base(100*ms, 108*ms, 32), false},
		{"span a twentieth of 155ms", base(100*ms, 100*ms+7750*time.Microsecond, 32), true},
		{"not ok", func() ledger.Record { r := base(700*ms, 701*ms, 32); r.Outcome = ledger.StreamError; return r }(), false},
		{"reasoning then content in one burst", func() ledger.Record {
			r := base(701*ms, 702*ms, 10)
			r.FirstReasoning, r.ReasoningEvents = 700*ms, 22
			return r
		}(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BufferedByIntermediary(&tt.rec); got != tt.want {
				t.Errorf("BufferedByIntermediary = %v, want %v", got, tt.want)
			}
		})
	}
}

// bufferedBody is an OpenAI chat stream of n content events and usage
// saying n completion tokens.
func bufferedBody(n int) []step {
	steps := []step{roleOnly}
	for i := range n {
		steps = append(steps, content(fmt.Sprintf("t%d ", i)))
	}
	usage := step{raw: `data: {"id":"c1","model":"m-1","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":` + fmt.Sprint(n) + `,"total_tokens":40}}` + "\n\n"}
	return append(steps, finishStop, usage, done)
}

func TestDoFlagsABufferedStream(t *testing.T) {
	const n = 40 // tokens: the pace floor says at least 195ms of generation
	steps := bufferedBody(n)
	// The buffering intermediary: silence, then the whole stream in one write.
	buffered := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sleep(r, 300*time.Millisecond) {
			return
		}
		var b strings.Builder
		for _, s := range steps {
			b.WriteString(s.raw)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(b.String()))
	}))
	defer buffered.Close()
	paced := make([]step, len(steps))
	copy(paced, steps)
	for i := range paced {
		paced[i].wait = 10 * time.Millisecond
	}
	streaming := httptest.NewServer(streamHandler(paced...))
	defer streaming.Close()

	c := newClient(t, ClientOptions{Timeouts: Timeouts{Total: 10 * time.Second}})
	res, rec := probe(t, c, context.Background(), buffered.URL+"/v1", Params{})
	if res.Outcome != ledger.OK || !rec.BufferedByIntermediary {
		t.Errorf("buffered stream: result %+v, flagged %v (first content %v, end %v)", res, rec.BufferedByIntermediary, rec.FirstContent, rec.End)
	}
	res, rec = probe(t, c, context.Background(), streaming.URL+"/v1", Params{})
	if res.Outcome != ledger.OK {
		t.Fatalf("streamed: result %+v", res)
	}
	if rec.BufferedByIntermediary {
		// The server wrote at pace; only a client starved of CPU for the
		// whole stream reads it in one burst: the host's fault, said so.
		t.Logf("streamed at pace but read in one burst (%v from first content to end): the host starved the client", rec.End-rec.FirstContent)
		if span := rec.End - rec.FirstContent; span*BufferedBurstShare > generationTime(rec, n) {
			t.Errorf("flagged with a span of %v", span)
		}
	}
}

// arrivals is an ok record whose content events arrived at the given
// times (from dispatch), its stream ending tail after the last one, with
// the server's timings when predictedMS > 0.
func arrivals(at []time.Duration, tail time.Duration, predictedN int, predictedMS float64) ledger.Record {
	r := ledger.Record{Outcome: ledger.OK, Dispatched: 1, FirstContent: at[0], LastContent: at[len(at)-1], End: at[len(at)-1] + tail, ContentEvents: len(at)}
	for i := 1; i < len(at); i++ {
		r.ChunkGaps = append(r.ChunkGaps, at[i]-at[i-1])
	}
	if predictedMS > 0 {
		r.ServerTimings = &ledger.ServerTimings{PredictedN: predictedN, PredictedMS: predictedMS, PredictedPerTokenMS: predictedMS / float64(predictedN)}
	}
	return r
}

// paced is n events generated one every pace from start, each delivered
// when the reader gets it: release(i, generated) is its arrival.
func paced(n int, start, pace time.Duration, release func(i int, generated time.Duration) time.Duration) []time.Duration {
	at := make([]time.Duration, n)
	for i := range at {
		at[i] = release(i, start+time.Duration(i)*pace)
	}
	return at
}

// buffered releases events a buffer of `every` events at a time, when the
// buffer's last event was generated (or the stream's last), each event of
// a burst a few microseconds after the one before: nginx with
// proxy_buffering on and a stream longer than its buffers.
func buffered(n, every int, start, pace time.Duration) []time.Duration {
	return paced(n, start, pace, func(i int, _ time.Duration) time.Duration {
		last := min((i/every+1)*every, n) - 1
		return start + time.Duration(last)*pace + time.Duration(i%every)*5*time.Microsecond
	})
}

func TestReleasedInBurstsRule(t *testing.T) {
	us, ms := time.Microsecond, time.Millisecond
	direct := func(i int, g time.Duration) time.Duration { return g + 50*us }
	tests := []struct {
		name string
		rec  ledger.Record
		want bool
	}{
		// Measured through nginx 1.22 (test/proxy): llama.cpp's 400-token
		// chat stream at 0.5 to 3 ms per token left nginx in 6 bursts of
		// 62 to 70 events, 40 to 235 ms apart, each within 100 µs.
		{"nginx: 400 tokens at 0.9ms, 6 bursts of 65", arrivals(buffered(400, 65, 10*ms, 900*us), 50*us, 400, 359), true},
		{"nginx: 1500 tokens at 2ms, 23 bursts of 65", arrivals(buffered(1500, 65, 10*ms, 2*ms), 50*us, 1500, 2998), true},
		{"nginx: 4 KiB buffers, 30 events at 1ms", arrivals(buffered(400, 30, 10*ms, ms), 50*us, 400, 399), true},
		{"no timings: 200 events at 20ms in 4 bursts (the pace floor)", arrivals(buffered(200, 50, 40*ms, 20*ms), 0, 0, 0), true},
		{"direct: 400 tokens at 0.9ms, read at pace", arrivals(paced(400, 10*ms, 900*us, direct), 50*us, 400, 359), false},
		{"direct on a busy host: the reader stalled 30ms every 100 tokens", arrivals(paced(400, 10*ms, 900*us, func(i int, g time.Duration) time.Duration {
			stall := 10*ms + time.Duration(i/100)*100*900*us // the stall's start
			return max(g, stall+30*ms)
		}), 50*us, 400, 359), false},
		{"a reader woken every 15ms: below the silence floor", arrivals(paced(400, 10*ms, 900*us, func(_ int, g time.Duration) time.Duration {
			return (g/(15*ms) + 1) * 15 * ms
		}), 50*us, 400, 359), false},
		{"a server writing 8 tokens at a time: bursts too small", arrivals(buffered(400, 8, 10*ms, 20*ms), 0, 400, 7980), false},
		{"bursts that took a fifth of the generation to arrive", arrivals(paced(400, 10*ms, ms, func(i int, _ time.Duration) time.Duration {
			return time.Duration(i/65)*65*ms + time.Duration(i%65)*200*us
		}), 0, 400, 399), false},
		{"31 events: too few for several bursts of 16", arrivals(buffered(31, 16, 10*ms, 20*ms), 0, 31, 600), false},
		{"one burst of a long stream after a silence: the one-burst rule", arrivals(paced(400, 500*ms, 0, func(i int, g time.Duration) time.Duration { return g + time.Duration(i)*us }), 0, 400, 400), true},
		{"not ok", func() ledger.Record {
			r := arrivals(buffered(400, 65, 10*ms, 900*us), 50*us, 400, 359)
			r.Outcome = ledger.Timeout
			return r
		}(), false},
		{"gaps truncated: not judged by bursts", func() ledger.Record {
			r := arrivals(buffered(400, 65, 10*ms, 900*us), 50*us, 400, 359)
			r.ChunkGaps, r.ChunksTruncated = r.ChunkGaps[:100], true
			return r
		}(), false},
		{"reasoning first, then content in bursts", func() ledger.Record {
			r := arrivals(buffered(300, 65, 100*ms, ms), 50*us, 400, 399)
			r.FirstReasoning, r.ReasoningEvents = 10*ms, 100
			return r
		}(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BufferedByIntermediary(&tt.rec); got != tt.want {
				t.Errorf("BufferedByIntermediary = %v, want %v (first content %v, end %v)", got, tt.want, tt.rec.FirstContent, tt.rec.End)
			}
		})
	}
}

// TestReleasedInBurstsBoundary holds the share: bursts whose arrival took
// exactly a quarter of the generation are flagged, a microsecond more is
// not.
func TestReleasedInBurstsBoundary(t *testing.T) {
	const n = 64
	gen := 630 * time.Millisecond // 63 gaps at the server's 10ms
	for _, tc := range []struct {
		arriving time.Duration
		want     bool
	}{{gen / BufferedBurstsShare, true}, {gen/BufferedBurstsShare + time.Microsecond, false}} {
		// Two bursts of 32: 62 gaps inside them share the arrival time,
		// one silence between them.
		gaps := make([]time.Duration, n-1)
		for i := range gaps {
			gaps[i] = tc.arriving / (n - 2)
		}
		gaps[n/2-1] = 500 * time.Millisecond
		rest := tc.arriving - (tc.arriving/(n-2))*(n-2) // the division's remainder, in the tail
		r := ledger.Record{Outcome: ledger.OK, Dispatched: 1, FirstContent: time.Second, ContentEvents: n, ChunkGaps: gaps,
			ServerTimings: &ledger.ServerTimings{PredictedN: n, PredictedMS: 630}}
		r.LastContent = r.FirstContent
		for _, g := range gaps {
			r.LastContent += g
		}
		r.End = r.LastContent + rest
		if got := BufferedByIntermediary(&r); got != tc.want {
			t.Errorf("arriving %v of %v generation: flagged %v, want %v", tc.arriving, gen, got, tc.want)
		}
	}
}
