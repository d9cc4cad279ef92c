package llamacpp

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// byteTokenBias makes llama.cpp generate nothing but token 131 (the lone
// byte <0x80>, not UTF-8 on its own): the staged model never emits byte
// tokens by itself (their output rows are zeroed), so the in-band error is
// forced with a request's logit_bias. With it the generation never stops
// early (EOS is never chosen): it runs to max_tokens, then the stream ends
// with {"error":{"code":500,"message":"Failed to parse input at pos N: …"}}
// (on completions: at the first such token).
var byteTokenBias = json.RawMessage(`{"131":100}`)

// biasProxy forwards to the server and adds byteTokenBias to every other
// POST (the 2nd, 4th, …), counting those it changed, and the responses it
// could not finish reading from the server (cut): Go's reverse proxy then
// aborts its own connection to the client, which the prober rightly
// records as transport_error/connection_reset, the proxy's doing.
type biasProxy struct {
	n, forced, cut atomic.Int64
}

// cutCounter counts the reverse proxy's "read error during body copy"
// lines (its ErrorLog), each a response from the server cut mid-body.
type cutCounter struct{ n *atomic.Int64 }

func (c cutCounter) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte("read error during body copy")) {
		c.n.Add(1)
	}
	return len(b), nil
}

// withoutProxyCuts drops from res up to cuts records that ended
// transport_error/connection_reset (the proxy aborting the client's
// connection after a cut, one each), logging them; any more stay, for
// checkOutcomes to fail on. It returns how many it dropped.
func withoutProxyCuts(t *testing.T, res *probeResult, cuts int64) int64 {
	t.Helper()
	var kept []ledger.Record
	dropped := int64(0)
	for _, r := range res.recs {
		if dropped < cuts && r.Outcome == ledger.TransportError && r.Reason == ledger.ReasonConnectionReset {
			dropped++
			t.Logf("%s: record %d ended %s/%s (%q) after the test's proxy lost the server's response mid-body (%d such cuts): the proxy's doing, left out",
				res.api, r.ID, r.Outcome, r.Reason, r.Error, cuts)
			continue
		}
		kept = append(kept, r)
	}
	res.recs = kept
	return dropped
}

func (p *biasProxy) start(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			if r.In.Method != http.MethodPost || p.n.Add(1)%2 != 0 {
				return
			}
			body, err := io.ReadAll(r.Out.Body)
			if err != nil {
				return
			}
			var m map[string]json.RawMessage
			if json.Unmarshal(body, &m) == nil {
				m["logit_bias"] = byteTokenBias
				if b, err := json.Marshal(m); err == nil {
					body = b
					p.forced.Add(1)
				}
			}
			r.Out.Body = io.NopCloser(bytes.NewReader(body))
			r.Out.ContentLength = int64(len(body))
			r.Out.Header.Set("Content-Length", strconv.Itoa(len(body)))
		},
		FlushInterval: -1,
		// A new connection per request: llama-server closes its connection
		// after every streamed response, and a pooled one could meet that
		// close (a 502 from the proxy, not the server's doing).
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		ErrorLog:  log.New(cutCounter{&p.cut}, "", 0),
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestProbeInBandErrors forces llama.cpp's in-band error on every other
// request of the three APIs that take a logit_bias (Messages ignores it)
// and checks that exactly those requests end stream_error/in_band_error
// with the server's message, sanitised, and how the server counts their
// tokens (checkTokens states the rule).
func TestProbeInBandErrors(t *testing.T) {
	testutil.RequireLlamaCpp(t)
	binary(t)
	for i, api := range []string{"openai-chat", "openai-completions", "openai-responses"} {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			srv := testutil.StartLlamaCpp(t)
			var px biasProxy
			res := probe(t, srv, px.start(t, srv.URL())+"/v1", api, 2, 8*time.Second, 100+i)
			// A response the proxy lost mid-body (seen once in CI on
			// completions, a request that was not forced) ends the client's
			// connection; it may have been a forced one.
			cut := withoutProxyCuts(t, &res, px.cut.Load())
			if px.cut.Load() > 0 {
				t.Logf("%s: the proxy lost %d responses mid-body; %d records left out", api, px.cut.Load(), cut)
			}
			inBand := checkOutcomes(t, res)
			counted := checkTokens(t, res, inBand)
			if got, want := int64(len(inBand)), px.forced.Load(); got > want || got < want-cut || want == 0 {
				t.Errorf("%s: %d in-band errors, %d requests forced to emit a lone byte token (%d cut by the proxy)", api, got, want, cut)
			}
			switch {
			case api == "openai-completions":
				t.Logf("%s: in-band errors: %d of %d requests; the server counted the tokens of %d of them (the error comes at the first token; the client hangs up; a task cancelled before its end is not counted)",
					api, len(inBand), len(res.recs), counted)
			case counted != len(inBand):
				t.Errorf("%s: the server counted the tokens of %d of %d in-band error requests: on this API the error is sent after the last token, so every one counts", api, counted, len(inBand))
			default:
				t.Logf("%s: in-band errors: %d of %d requests, every one's %d tokens counted by the server (the error is sent after the last token)",
					api, len(inBand), len(res.recs), probeMaxTokens)
			}
			if len(inBand) > 0 {
				t.Logf("%s: in-band error as recorded: %q", api, inBand[0].Error)
			}
		})
	}
}
