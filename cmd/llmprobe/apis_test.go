package main

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/sim"
)

// `probe --api X` works against every API the simulator speaks, with
// reasoning streamed first (where the API has a reasoning stream): TTFT waits for visible content by default,
// --ttft-boundary any_token lets the first reasoning token count, and the
// report names the boundary it used.
func TestProbeEachAPI(t *testing.T) {
	cfg := fastSim()
	cfg.ReasoningTokens = sim.FixedDist(4)
	base := startSim(t, cfg)
	for _, api := range protocol.Names() {
		t.Run(api, func(t *testing.T) {
			ledgerPath := tempPath(t, "ledger.jsonl")
			r := completes(t, "probe", "--url", base, "--api", api, "--rate", "20", "--duration", "1s",
				"--max-tokens", "16", "--ledger", ledgerPath, "--json")
			p := decodeProbe(t, r)
			if p.Planned == 0 || p.Outcomes[string(ledger.OK)] != p.Planned {
				t.Fatalf("%s: planned %d, outcomes %v: want every request ok", api, p.Planned, p.Outcomes)
			}
			if p.TTFT.Count != p.Planned {
				t.Fatalf("%s: TTFT count %d, want %d", api, p.TTFT.Count, p.Planned)
			}
			if api == protocol.APIOpenAICompletions {
				return // the completions API has no reasoning stream
			}
			if p.TTFR.Count != p.Planned {
				t.Fatalf("%s: TTFR count %d, want %d", api, p.TTFR.Count, p.Planned)
			}
			if !(p.TTFR.P50 < p.TTFT.P50) {
				t.Fatalf("%s: first reasoning (%v) not before first visible content (%v)", api, p.TTFR.P50, p.TTFT.P50)
			}
			if !strings.Contains(p.Boundaries["ttft"], "first visible content") {
				t.Fatalf("%s: TTFT boundary %q", api, p.Boundaries["ttft"])
			}
			_, recs := readLedger(t, ledgerPath)
			for _, rec := range recs {
				if rec.API != api || !rec.Usage.Known || rec.Usage.Completion == 0 {
					t.Fatalf("%s: record %d: api %q usage %+v", api, rec.ID, rec.API, rec.Usage)
				}
			}

			// The any_token run is judged within itself, request by request:
			// TTFT then ends at the first reasoning token, which the simulator
			// streams before the first visible content. (Comparing its TTFT
			// with the content run's compares two runs' noise on a busy host.)
			anyPath := tempPath(t, "any.jsonl")
			anyRes := decodeProbe(t, completes(t, "probe", "--url", base, "--api", api, "--rate", "20", "--duration", "1s",
				"--max-tokens", "16", "--ttft-boundary", "any_token", "--ledger", anyPath, "--json"))
			if !strings.Contains(anyRes.Boundaries["ttft"], "any kind") {
				t.Fatalf("%s: any_token TTFT boundary %q", api, anyRes.Boundaries["ttft"])
			}
			if anyRes.TTFT.Count != anyRes.TTFR.Count || anyRes.TTFT.P50 != anyRes.TTFR.P50 {
				t.Fatalf("%s: any_token TTFT p50 %v (n=%d) is not the time to first reasoning %v (n=%d)",
					api, anyRes.TTFT.P50, anyRes.TTFT.Count, anyRes.TTFR.P50, anyRes.TTFR.Count)
			}
			_, anyRecs := readLedger(t, anyPath)
			for _, rec := range anyRecs {
				ttft, ok := rec.TTFT()
				if rec.Outcome != ledger.OK || !ok || rec.TTFTBoundary != ledger.TTFTAnyToken {
					t.Fatalf("%s: any_token record %d: outcome %s, TTFT defined %v, boundary %q", api, rec.ID, rec.Outcome, ok, rec.TTFTBoundary)
				}
				if content := rec.FirstContent - rec.Planned; !(ttft < content) || rec.FirstToken() != rec.FirstReasoning {
					t.Fatalf("%s: record %d: TTFT to any token %v not below TTFT to content %v", api, rec.ID, ttft, content)
				}
			}
		})
	}
}
