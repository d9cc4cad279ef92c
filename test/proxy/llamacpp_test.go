package proxy

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestLlamaCppBehindNginx puts nginx with TLS in front of the real
// llama.cpp server (HTTP/1.1 to the client). Directly and with
// proxy_buffering off no
// stream long enough to judge (the server's own timings) is flagged. With
// it on, what nginx does is measured and logged: it passed llama.cpp's
// chunked streams on in parts (docs/deploy.md), so a stream is flagged
// only when it did arrive in one burst, and never one that visibly
// streamed.
func TestLlamaCppBehindNginx(t *testing.T) {
	requireNginx(t)
	srv := testutil.StartLlamaCpp(t)
	upstream := strings.TrimPrefix(srv.URL(), "http://")
	// 400 tokens at the tiny model's pace (1 to 3 ms per token here) take
	// long enough to judge.
	p := protocol.Params{Model: "m", MaxTokens: 400, Messages: []protocol.Message{{Role: "user", Content: "Tell me a long story about a proxy."}}}
	for _, mode := range []string{"direct", "proxy_buffering off", "proxy_buffering on"} {
		name, buffering := mode, mode == "proxy_buffering on"
		t.Run(name, func(t *testing.T) {
			var recs []*ledger.Record
			if mode == "direct" {
				recs = runWith(t, client(t, "", true), srv.URL()+"/v1", p, 3, time.Second, nil)
			} else {
				n := startNginx(t, proxyConfig{Upstream: upstream, Buffering: buffering})
				recs = runWith(t, client(t, n.cfg.CAFile, true), n.TLSURL(), p, 3, time.Second, nil)
			}
			judged, flagged := 0, 0
			for _, r := range recs {
				if r.Outcome != ledger.OK {
					t.Fatalf("request %d: %s/%s %q", r.ID, r.Outcome, r.Reason, r.Error)
				}
				st := r.ServerTimings
				if st == nil || st.Invalid {
					t.Fatalf("request %d: llama.cpp sent no timings", r.ID)
				}
				span := r.End - r.FirstContent
				if r.BufferedByIntermediary {
					flagged++
				}
				if st.PredictedMS < 100 {
					continue // too short to judge
				}
				judged++
				streamed := span > time.Duration(st.PredictedMS*float64(time.Millisecond))/2
				if r.BufferedByIntermediary && (!buffering || streamed) {
					t.Errorf("request %d flagged with %s though it streamed over %v (server: %d tokens in %.0f ms)", r.ID, name, span, st.PredictedN, st.PredictedMS)
				}
				t.Logf("request %d: server %d tokens in %.0f ms, first content to end %v, flagged %v", r.ID, st.PredictedN, st.PredictedMS, span.Round(time.Millisecond), r.BufferedByIntermediary)
			}
			t.Logf("llama.cpp, %s: %d streams, %d long enough to judge, %d flagged; %s", name, len(recs), judged, flagged, summarise(recs))
			if judged == 0 {
				t.Errorf("no stream took long enough to judge: the test proves nothing")
			}
		})
	}
}
