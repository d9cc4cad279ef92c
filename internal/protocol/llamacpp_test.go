package protocol

import (
	"context"
	"fmt"
	"net/http/httptrace"
	"slices"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestLlamaCppTimingsAndKeepAlive (issue 18, against the real server):
// every chat and completions stream carries the server's timings, which
// agree with the client's figures request by request (generous bounds on
// a busy host; the figures are logged), and no request fails for the
// prober's connection reuse: back to back, or after the server's 5 s
// keep-alive timeout.
func TestLlamaCppTimingsAndKeepAlive(t *testing.T) {
	base := testutil.StartLlamaCpp(t).URL() + "/v1"
	c, err := NewClient(ClientOptions{Timeouts: Timeouts{Total: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	l := ledger.New(time.Now())
	var reused bool
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { reused = ci.Reused }})
	do := func(a Adapter, p Params) (ledger.Result, *ledger.Record) {
		rec := l.Plan(ledger.Meta{Target: "llama.cpp"}, l.Now())
		res := c.Do(ctx, Target{Base: base, Adapter: a}, p, rec, l.Now, func() { l.MarkDispatched(rec) })
		if err := l.Finish(rec, res.Outcome, res.Reason, res.Err); err != nil {
			t.Fatal(err)
		}
		return res, rec
	}
	const n = 20
	for _, a := range []Adapter{OpenAIChat{}, OpenAICompletions{}} {
		var prefill, tpot []time.Duration
		for i := range n {
			p := Params{Model: "tiny", MaxTokens: 64, Messages: []Message{{Role: "user", Content: fmt.Sprintf("Say hello, number %d.", i)}}}
			res, rec := do(a, p)
			if res.Outcome != ledger.OK {
				t.Fatalf("%s request %d: %+v", a.Name(), i, res)
			}
			st := rec.ServerTimings
			if st == nil || st.Invalid || st.PredictedN != rec.Usage.Completion || st.PromptMS <= 0 {
				t.Fatalf("%s request %d: server timings %+v, usage %+v: want valid, predicted_n = completion tokens", a.Name(), i, st, rec.Usage)
			}
			g, ok := rec.PrefillGap()
			if !ok {
				t.Fatalf("%s request %d: no prefill gap", a.Name(), i)
			}
			prefill = append(prefill, g)
			if g, ok := rec.TPOTGap(); ok {
				tpot = append(tpot, g)
			}
		}
		slices.Sort(prefill)
		slices.Sort(tpot)
		q := func(s []time.Duration, f float64) time.Duration { return s[min(len(s)-1, int(f*float64(len(s))))] }
		t.Logf("%s: %d requests with server timings; prefill gap (TTFT from dispatch − prompt_ms) p50 %v p95 %v; TPOT gap (TPOT − predicted_per_token_ms) p50 %v p95 %v (n=%d)",
			a.Name(), n, q(prefill, .5), q(prefill, .95), q(tpot, .5), q(tpot, .95), len(tpot))
		// The client's TTFT contains the server's prompt time (a little
		// below it only through rounding), and a loopback request is not
		// half a second late on any host that still runs the test.
		if q(prefill, 0) < -time.Millisecond || q(prefill, .5) > 500*time.Millisecond {
			t.Errorf("%s: prefill gap p0 %v p50 %v: want ≥ −1ms and ≤ 500ms", a.Name(), q(prefill, 0), q(prefill, .5))
		}
		if len(tpot) < n/2 || q(tpot, .5) < -5*time.Millisecond || q(tpot, .5) > 5*time.Millisecond {
			t.Errorf("%s: TPOT gap p50 %v over %d requests: want within ±5ms over at least %d", a.Name(), q(tpot, .5), len(tpot), n/2)
		}
	}

	// This build closes the connection after every streamed response,
	// though it says `Keep-Alive: timeout=5` and not `Connection: close`:
	// a request sent right after one races that close. Back to back, every
	// request ends ok; a lost race is replayed, on the record.
	var replayed, reusedN int
	for i := range 40 {
		res, rec := do(OpenAIChat{}, Params{Model: "tiny", MaxTokens: 4, Messages: []Message{{Role: "user", Content: "hi"}}})
		if res.Outcome != ledger.OK {
			t.Errorf("back-to-back request %d: %+v (replays %d)", i, res, rec.Replays)
		}
		replayed += rec.Replays
		if reused {
			reusedN++
		}
	}
	t.Logf("40 back-to-back streamed requests: all ok, %d replays, %d on a reused connection", replayed, reusedN)

	// After the server's keep-alive timeout the request is not failed.
	time.Sleep(5500 * time.Millisecond)
	res, rec := do(OpenAIChat{}, Params{Model: "tiny", MaxTokens: 8, Messages: []Message{{Role: "user", Content: "hi"}}})
	if res.Outcome != ledger.OK {
		t.Errorf("request after 5.5s idle: %+v, replays %d; want ok", res, rec.Replays)
	}
}
