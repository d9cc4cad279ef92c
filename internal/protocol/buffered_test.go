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
