package main

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestCancellationInjection: --cancel-fraction cancels about that share of
// requests after --cancel-after; they are recorded cancelled/injected, kept
// out of the success figures, and left out of the completed and good
// fractions' denominators.
func TestCancellationInjection(t *testing.T) {
	t.Parallel()
	const after = 100 * time.Millisecond
	path := tempPath(t, "inject.jsonl")
	// 64 tokens at 10 ms each: every request is still streaming at 100 ms.
	res := completes(t, "probe", "--rate", "20", "--duration", "2s", "--arrival", "constant", "--max-tokens", "64",
		"--cancel-fraction", "0.5", "--cancel-after", after.String(), "--json", "--ledger", path)
	p := decodeProbe(t, res)
	_, recs := readLedger(t, path)
	checkLedgerInvariants(t, recs)
	byO, byR := countOutcomes(recs)
	injected := byR["cancelled/injected"]
	t.Logf("outcomes %v", byR)
	if injected == 0 || byO[ledger.OK] == 0 {
		t.Fatalf("want both injected cancellations and ok requests at fraction 0.5; got %v", byR)
	}
	if injected+byO[ledger.OK] != len(recs) {
		t.Errorf("outcomes %v: want only ok and cancelled/injected", byR)
	}
	if p.InjectedCancels != injected || p.Cancelled != injected || p.Reasons["cancelled"]["injected"] != injected {
		t.Errorf("report injected %d, cancelled %d, reasons %v; ledger %d", p.InjectedCancels, p.Cancelled, p.Reasons["cancelled"], injected)
	}
	for _, r := range recs {
		// The injection's timer starts as the request is handed to the
		// client, a few µs before dispatched_ns is stamped: allow 2 ms.
		if r.Outcome == ledger.Cancelled && r.End-r.Dispatched < after-2*time.Millisecond {
			t.Errorf("record %d cancelled %v after dispatch, before the %v asked for", r.ID, r.End-r.Dispatched, after)
		}
	}
	if p.TTFT.Count > byO[ledger.OK] || p.E2E.Count != byO[ledger.OK] {
		t.Errorf("TTFT count %d, e2e count %d: success figures must cover the %d ok requests only", p.TTFT.Count, p.E2E.Count, byO[ledger.OK])
	}
	if p.CompletedFraction != 1 || p.Goodput.Fraction != 1 {
		t.Errorf("completed fraction %v, good fraction %v: injected cancellations must leave the denominators", p.CompletedFraction, p.Goodput.Fraction)
	}
}
