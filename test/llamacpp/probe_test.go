package llamacpp

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// The probe runs: a modest open-loop load, short replies.
const (
	probeRate         = 4.0 // requests per second
	probeDuration     = 15 * time.Second
	probeMaxTokens    = 32
	probePromptTokens = 64
)

// Timing tolerances, chosen from measurement (docs/protocols.md, "llama.cpp,
// a tested engine").
//
// The server's prompt_ms runs from the start of its prompt processing to
// its first sampled token, an interval nested inside the client's TTFT from
// dispatch (which adds writing the request, the server's HTTP parsing and
// slot hand-off, and delivering the first chunk): every request's gap
// TTFT_dispatch − prompt_ms (ledger.Record.PrefillGap) is ≥ 0, and likewise
// E2E_dispatch ≥ prompt_ms + predicted_ms. Measured on loopback on 2 shared
// cores at CPU pressure (PSI some avg10) of 99 %: gap p50 4.3-9 ms, p90
// 10-58 ms, single requests up to 160 ms. The bound on the p50 is that busy
// host's figure with room.
//
// TPOT: the client's (last − first content)/(n − 1) against the server's
// predicted_per_token_ms = predicted_ms/n: measured ratio p50 1.025-1.031
// (n/(n−1) = 32/31 = 1.032 explains it), p10-p90 0.95-1.07, single
// requests 0.54-1.24 under load. The p50 must be within tpotRatioTol of 1.
const (
	prefillGapP50Max = 25 * time.Millisecond
	tpotRatioTol     = 0.20
)

// apiCase is one streaming API of llama-server.
type apiCase struct {
	api string
	// timings: its stream carries llama.cpp's `timings` object (chat: in
	// the finish chunk and the usage chunk; completions: in the last
	// chunk). The Responses and Messages streams carry none.
	timings bool
}

var apiCases = []apiCase{
	{api: "openai-chat", timings: true},
	{api: "openai-completions", timings: true},
	{api: "openai-responses"},
	{api: "anthropic-messages"},
}

// probeResult is one `llmprobe probe` run and the server's counter around it.
type probeResult struct {
	api       string
	recs      []ledger.Record
	rep       report.Probe
	tokensDel float64 // increase of llamacpp:tokens_predicted_total over the run
}

// probe runs `llmprobe probe` against url (the server's /v1 or a proxy in
// front of it) and reads its ledger and the server's token counter.
func probe(t *testing.T, srv *testutil.LlamaServer, url, api string, rate float64, d time.Duration, seed int) probeResult {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	before := tokensPredicted(t, srv)
	stdout, stderr, code := testutil.Run(t, d+90*time.Second, testutil.Env(), binary(t), "probe",
		"--url", url, "--model", "tiny", "--api", api,
		"--rate", fmt.Sprint(rate), "--duration", d.String(), "--seed", fmt.Sprint(seed),
		"--max-tokens", fmt.Sprint(probeMaxTokens), "--prompt-tokens", fmt.Sprint(probePromptTokens),
		"--drain", "30s", "--ledger", path, "--json")
	after := tokensPredicted(t, srv)
	res := probeResult{api: api, tokensDel: after - before}
	if err := json.Unmarshal(stdout, &res.rep); err != nil {
		t.Fatalf("%s: probe --json printed no report (exit %d): %v\nstderr:\n%s", api, code, err, testutil.Tail(string(stderr), 3000))
	}
	switch code {
	case 0:
	case 4:
		// Generator invalid: on a busy host the prober may not keep its
		// schedule. Every check here matches client and server request by
		// request, so none needs a valid generator; say why it was invalid.
		var causes []string
		for _, c := range res.rep.InvalidCauses {
			causes = append(causes, c.Cause+": "+c.Reason)
		}
		t.Logf("%s: generator invalid (exit 4; the checks below match request by request and do not need a valid generator): %s; causes: %s",
			api, strings.Join(res.rep.InvalidReasons, "; "), strings.Join(causes, "; "))
	default:
		t.Fatalf("%s: probe exit %d; stderr:\n%s", api, code, testutil.Tail(string(stderr), 3000))
	}
	lf, err := readLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	res.recs = lf.records
	if len(res.recs) != res.rep.Attempts {
		t.Errorf("%s: the ledger holds %d records, the report %d attempts", api, len(res.recs), res.rep.Attempts)
	}
	return res
}

// TestProbeAPIs probes llama-server through each of its four streaming
// APIs (one server per API, in parallel) and checks the ledger against the
// server: outcomes, tokens and timings.
func TestProbeAPIs(t *testing.T) {
	testutil.RequireLlamaCpp(t)
	binary(t)
	for i, c := range apiCases {
		t.Run(c.api, func(t *testing.T) {
			t.Parallel()
			srv := testutil.StartLlamaCpp(t)
			res := probe(t, srv, srv.URL()+"/v1", c.api, probeRate, probeDuration, i+1)
			if res.rep.Planned < int(probeRate*probeDuration.Seconds()/2) {
				t.Errorf("%s: only %d requests planned at %g req/s for %v", c.api, res.rep.Planned, probeRate, probeDuration)
			}
			inBand := checkOutcomes(t, res)
			checkTokens(t, res, inBand)
			if c.timings {
				checkTimings(t, res)
			} else {
				t.Logf("%s: timing agreement: not checked: llama.cpp's %s stream carries no timings", c.api, c.api)
			}
		})
	}
}

// checkOutcomes asserts every request ended ok, or stream_error/in_band_error
// carrying the server's message, sanitised; it logs the tally and returns
// the in-band error records.
func checkOutcomes(t *testing.T, res probeResult) []ledger.Record {
	t.Helper()
	tally := map[string]int{}
	var inBand []ledger.Record
	replayed := 0
	for _, r := range res.recs {
		tally[string(r.Outcome)+"/"+string(r.Reason)]++
		if r.Replays > 0 {
			// llama-server closes the connection after every streamed
			// response: a request sent on a pooled one as the close
			// arrives is replayed, and says so.
			replayed++
			if r.ReplayReason != ledger.ReasonStaleConnection || r.Replayed == 0 {
				t.Errorf("%s: record %d: %d replays with reason %q at %v, want stale_connection and a time", res.api, r.ID, r.Replays, r.ReplayReason, r.Replayed)
			}
		}
		if msg := unclean(r.Error, ledger.MaxErrorBytes); msg != "" {
			t.Errorf("%s: record %d: error %q: %s", res.api, r.ID, r.Error, msg)
		}
		switch {
		case r.Outcome == ledger.OK:
			if !r.Usage.Known || r.Usage.Completion < 1 {
				t.Errorf("%s: record %d: ok without a completion count: %+v", res.api, r.ID, r.Usage)
			}
		case r.Outcome == ledger.StreamError && r.Reason == ledger.ReasonInBandError:
			inBand = append(inBand, r)
			if !strings.Contains(r.Error, inBandMessage) {
				t.Errorf("%s: record %d: in-band error %q lacks the server's message (%q…)", res.api, r.ID, r.Error, inBandMessage)
			}
		default:
			t.Errorf("%s: record %d: %s/%s (%q; planned %v, dispatched %v, headers %v, end %v), want ok or stream_error/in_band_error",
				res.api, r.ID, r.Outcome, r.Reason, r.Error, r.Planned, r.Dispatched, r.Headers, r.End)
		}
	}
	keys := make([]string, 0, len(tally))
	for k := range tally {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, tally[k]))
	}
	t.Logf("%s: %d requests (%d planned, valid generator: %t): %s; %d replayed after a keep-alive race",
		res.api, len(res.recs), res.rep.Planned, res.rep.Valid, strings.Join(parts, " "), replayed)
	return inBand
}

// inBandMessage starts the message llama.cpp sends in-band when the
// generated text is not valid UTF-8.
const inBandMessage = "Failed to parse input"

// checkTokens asserts the ledger's completion tokens add up to the
// increase of llamacpp:tokens_predicted_total, and returns how many
// in-band error requests the server counted (max_tokens each).
//
// The rule, measured: llama.cpp adds a request's generated tokens to the
// counter when its task ends, and an in-band error stream carries no usage.
// On chat and Responses the error is sent after the last token (the output
// is parsed at the end), so the task has ended and its max_tokens tokens
// count. On completions it is sent at the first token that is not UTF-8,
// the client hangs up at it, and the server, noticing at its next write,
// cancels the task without counting any of its tokens, unless it finished
// generating first. (The staged model only emits byte tokens when forced,
// so its in-band errors always run to max_tokens.) So the increase is the
// ok records' completion tokens plus k × max_tokens, 0 ≤ k ≤ in-band errors.
func checkTokens(t *testing.T, res probeResult, inBand []ledger.Record) int {
	t.Helper()
	client := 0
	for _, r := range res.recs {
		if r.Outcome == ledger.OK {
			client += r.Usage.Completion
		}
	}
	extra := res.tokensDel - float64(client)
	k := int(extra) / probeMaxTokens
	t.Logf("%s: tokens: client %d (ok records' usage), server +%g (llamacpp:tokens_predicted_total); %d in-band error requests, %d of them counted by the server (%d tokens each)",
		res.api, client, res.tokensDel, len(inBand), k, probeMaxTokens)
	if extra < 0 || extra != float64(k*probeMaxTokens) || k > len(inBand) {
		t.Errorf("%s: llamacpp:tokens_predicted_total rose by %g; the ledger says %d ok tokens + k × %d for k of its %d in-band errors",
			res.api, res.tokensDel, client, probeMaxTokens, len(inBand))
	}
	return k
}

// checkTimings matches each ok record's TTFT from dispatch and TPOT with
// the server's own timings for it.
func checkTimings(t *testing.T, res probeResult) {
	t.Helper()
	var gaps, ratios []float64
	missing := 0
	for _, r := range res.recs {
		// TTFT from dispatch − prompt_ms is ledger.Record.PrefillGap; the
		// TPOT ratio below is TPOT / predicted_per_token_ms.
		if r.Outcome != ledger.OK {
			continue
		}
		st := r.ServerTimings
		if st == nil || st.Invalid {
			missing++
			continue
		}
		if st.PredictedN != r.Usage.Completion {
			t.Errorf("%s: record %d: server timings predicted_n %d, usage completion_tokens %d", res.api, r.ID, st.PredictedN, r.Usage.Completion)
		}
		ttft, _ := r.TTFTFromDispatch()
		g, ok := r.PrefillGap()
		if !ok {
			t.Errorf("%s: record %d: ok with server timings but no prefill gap (no first token?)", res.api, r.ID)
			continue
		}
		gap := ms(g)
		if gap < 0 {
			t.Errorf("%s: record %d: TTFT from dispatch %.3f ms is below the server's prompt_ms %.3f: the server's interval must lie inside the client's",
				res.api, r.ID, ms(ttft), st.PromptMS)
		}
		if e2e := ms(r.End - r.Dispatched); e2e < st.PromptMS+st.PredictedMS {
			t.Errorf("%s: record %d: end to end from dispatch %.3f ms is below the server's prompt_ms + predicted_ms %.3f",
				res.api, r.ID, e2e, st.PromptMS+st.PredictedMS)
		}
		gaps = append(gaps, gap)
		if tpot, ok := r.TPOT(); ok && st.PredictedPerTokenMS > 0 {
			ratios = append(ratios, ms(tpot)/st.PredictedPerTokenMS)
		}
	}
	if missing > 0 {
		t.Errorf("%s: %d ok records carry no server_timings, though llama.cpp's %s stream sends them", res.api, missing, res.api)
	}
	if len(gaps) == 0 {
		t.Errorf("%s: no ok record with server timings to compare", res.api)
		return
	}
	sort.Float64s(gaps)
	sort.Float64s(ratios)
	gp50 := quantile(gaps, 0.5)
	t.Logf("%s: timing agreement over %d requests: TTFT from dispatch − server prompt_ms: p50 %.2f ms, p90 %.2f ms, min %.2f ms, max %.2f ms (bound: p50 < %v, each ≥ 0)",
		res.api, len(gaps), gp50, quantile(gaps, 0.9), gaps[0], gaps[len(gaps)-1], prefillGapP50Max)
	if gp50 >= ms(prefillGapP50Max) {
		t.Errorf("%s: TTFT from dispatch − prompt_ms p50 %.2f ms, over the bound %v", res.api, gp50, prefillGapP50Max)
	}
	if len(ratios) == 0 {
		t.Errorf("%s: no ok record with a TPOT to compare", res.api)
		return
	}
	rp50 := quantile(ratios, 0.5)
	t.Logf("%s: timing agreement over %d requests: TPOT client/server (predicted_per_token_ms): p50 %.3f, p10 %.3f, p90 %.3f (bound: p50 within %.0f %% of 1)",
		res.api, len(ratios), rp50, quantile(ratios, 0.1), quantile(ratios, 0.9), tpotRatioTol*100)
	if math.Abs(rp50-1) > tpotRatioTol {
		t.Errorf("%s: TPOT client/server p50 %.3f, outside 1 ± %.2f", res.api, rp50, tpotRatioTol)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// quantile of sorted xs (nearest rank).
func quantile(xs []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}
