package main

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestRetriesAreAttempts: with --retries, a rejected request is tried again,
// each attempt its own ledger record; only first attempts count as planned
// demand, and every attempt is accounted for.
func TestRetriesAreAttempts(t *testing.T) {
	t.Parallel()
	s := newSim(t, fastSim())
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 1 { // every other request is turned away
			http.Error(w, `{"error":{"message":"busy"}}`, http.StatusTooManyRequests)
			return
		}
		s.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	path := tempPath(t, "retries.jsonl")
	res := completes(t, "probe", "--url", srv.URL+"/v1", "--rate", "10", "--duration", "2s", "--arrival", "constant",
		"--max-tokens", "8", "--retries", "2", "--json", "--ledger", path)
	p := decodeProbe(t, res)
	_, recs := readLedger(t, path)
	checkLedgerInvariants(t, recs)

	if int64(len(recs)) != n.Load() {
		t.Errorf("%d ledger records for %d requests the server saw", len(recs), n.Load())
	}
	attempts := map[int]int{}
	rejectedAt := map[int]int{}
	for _, r := range recs {
		if r.Attempt < 1 || r.Attempt > 3 {
			t.Errorf("record %d: attempt %d, want 1..3 with --retries 2", r.ID, r.Attempt)
		}
		attempts[r.Attempt]++
		if r.Outcome == ledger.Rejected {
			rejectedAt[r.Attempt]++
		}
	}
	t.Logf("attempts %v, rejected per attempt %v; report planned %d dispatched %d outside window %d",
		attempts, rejectedAt, p.Planned, p.Dispatched, p.OutsideWindow)
	if attempts[2] == 0 {
		t.Fatal("no retry was made after a 429")
	}
	for k := 1; k < 3; k++ {
		if attempts[k+1] > rejectedAt[k] {
			t.Errorf("%d attempts #%d after only %d rejections of attempt #%d", attempts[k+1], k+1, rejectedAt[k], k)
		}
	}
	if p.Planned != attempts[1] {
		t.Errorf("report planned %d, first attempts %d: retries are not demand", p.Planned, attempts[1])
	}
	sum := 0
	for _, c := range p.Outcomes {
		sum += c
	}
	if sum+p.OutsideWindow != len(recs) {
		t.Errorf("report outcomes %d + outside window %d ≠ %d ledger records", sum, p.OutsideWindow, len(recs))
	}
	if p.Outcomes["ok"] != p.TTFT.Count {
		t.Errorf("%d ok but %d TTFT samples", p.Outcomes["ok"], p.TTFT.Count)
	}
}
