package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestLadderExitNamesTheRule: the exit line names the rule that stopped the
// ladder, with its figure, and the generator's causes only when its rule
// did (or beside the rule, when the aborted step was invalid too). An abort
// after capacity was measured is the ladder's normal end (exit 0, the abort
// said); before any capacity it is exit 6.
func TestLadderExitNamesTheRule(t *testing.T) {
	inFlight := []verdict.InvalidCause{{Cause: cause.InFlightCap}}
	met := ladderresult.LadderStep{Index: 1, Summary: stats.Summary{Planned: 10, Completed: 10, Validity: verdict.Validity{Valid: true}}}
	ttft := "mid-step: TTFT p95 9.1s above 5 × gate 1s"
	invalid := ladderresult.LadderStep{Index: 2, Summary: stats.Summary{Planned: 40, Completed: 12, Validity: verdict.Validity{Causes: inFlight}}, AbortReason: ttft}
	for _, tc := range []struct {
		name string
		res  ladder.Result
		want int
		says []string
		not  string
	}{
		{"TTFT abort on an invalid step, no capacity", ladder.Result{Steps: []ladderresult.LadderStep{{Index: 1, Summary: stats.Summary{Planned: 40, Completed: 12, Validity: verdict.Validity{Causes: inFlight}}, AbortReason: ttft}},
			Aborted: true, AbortReason: "step 1: " + ttft}, exitLadderNoCapacity,
			[]string{"ladder aborted before any capacity was measured: step 1: " + ttft, "step 1's generator was also invalid (in_flight_cap)"}, "stopped the ladder"},
		{"TTFT abort on an invalid step after capacity", ladder.Result{Steps: []ladderresult.LadderStep{met, invalid}, Verdict: ladderresult.Verdict{CapacityStep: 1, Capacity: 5, CapacityBound: ladderresult.BoundLower},
			Aborted: true, AbortReason: "step 2: " + ttft}, exitOK,
			[]string{"capacity 5 req/s (step 1, lower bound); the ladder ended at its abort rule: step 2: " + ttft, "in_flight_cap"}, "generator invalid:"},
		{"generator rule", ladder.Result{Steps: []ladderresult.LadderStep{met, aborted(invalid, "generator invalid: 3 of 40 unsent (in-flight cap)")}, Verdict: ladderresult.Verdict{CapacityStep: 1},
			Aborted: true, AbortReason: "step 2: generator invalid: 3 of 40 unsent (in-flight cap)"}, exitGeneratorInvalid,
			[]string{"generator invalid: step 2 (in_flight_cap) stopped the ladder"}, ""},
		{"unsent rule on an invalid step (the prober's cap)", ladder.Result{Steps: []ladderresult.LadderStep{met, aborted(invalid, "mid-step: unsent fraction 0.900 above 0.000 (18 of 20 planned)")},
			Verdict: ladderresult.Verdict{CapacityStep: 1}, Aborted: true}, exitGeneratorInvalid,
			[]string{"generator invalid: step 2 (in_flight_cap) stopped the ladder by its unsent rule: mid-step: unsent fraction 0.900"}, ""},
		{"unsent rule on a valid step after capacity", ladder.Result{Steps: []ladderresult.LadderStep{met, {Index: 2, Summary: stats.Summary{Planned: 40, Completed: 30, Validity: verdict.Validity{Valid: true}}, AbortReason: "unsent fraction 0.050 above 0.000 (2 of 40 planned)"}},
			Verdict: ladderresult.Verdict{CapacityStep: 1, Capacity: 5, CapacityBound: ladderresult.BoundMeasured}, Aborted: true, AbortReason: "step 2: unsent fraction 0.050 above 0.000 (2 of 40 planned)"}, exitOK,
			[]string{"capacity 5 req/s (step 1, measured bound); the ladder ended at its abort rule: step 2: unsent fraction 0.050"}, "also invalid"},
	} {
		err := ladderExit(tc.res, nil)
		if got := codeOf(err); got != tc.want {
			t.Errorf("%s: exit %d, want %d (%v)", tc.name, got, tc.want, err)
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		for _, w := range tc.says {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: exit line %q lacks %q", tc.name, msg, w)
			}
		}
		if tc.not != "" && strings.Contains(msg, tc.not) {
			t.Errorf("%s: exit line %q says %q", tc.name, msg, tc.not)
		}
	}
}

// TestLadderAbortAfterCapacityExits0 runs the CLI against a target that
// answers step 1 (5 req/s) and then stalls: step 2's in-step TTFT rule
// stops the ladder. Its capacity (step 1) was measured before the abort,
// so the abort is the ladder's normal end: exit 0, the capacity and the
// rule with its figure on stderr. (Before: exit 6 "ladder aborted".)
// The gate (1 s) is one a loaded loopback simulator meets; a simulator on
// a starved host may still miss it (it shares the prober's CPU): step 1
// unmet with the host starved skips, saying so. The stall is counted in
// distinct requests (Idempotency-Key), so that a replay of a step 1
// request does not start it early.
func TestLadderAbortAfterCapacityExits0(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a whole ladder past capacity against the simulator, in real time")
	}
	t.Parallel()
	s := newSim(t, fastSim())
	var mu sync.Mutex
	seen := map[string]bool{}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get(protocol.IdempotencyKeyHeader)] = true
		stall := len(seen) > 20 // step 1's 20 arrivals answered; then it stalls
		mu.Unlock()
		if stall {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		s.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	args := append([]string{"ladder", "--url", srv.URL + "/v1", "--steps", "5,40", "--step-duration", "4s", "--gap", "0s", "--arrival", "constant",
		"--max-tokens", "8", "--slo-ttft", "1s", "--abort-ttft-gate-multiple", "2", "--stop-at", "top", "--json",
		"--timeout-connect", "1s", "--timeout-headers", "5s", "--timeout-first-content", "5s", "--timeout-idle", "5s", "--timeout-total", "6s"}, lenient...)
	r := mustExit(t, []int{exitOK, exitGeneratorInvalid, exitLadderNoCapacity}, args...)
	var l ladder.Result
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || len(l.Steps) == 0 {
		t.Fatalf("ladder --json: %v (%d steps)\n%s", err, len(l.Steps), r.stdout)
	}
	step1 := l.Steps[0].Summary
	if v := step1.Validity; !v.Valid {
		if !verdict.HostCaused(v.Causes) {
			t.Fatalf("step 1 invalid for no host cause: %v\n%s", v.Reasons(), r.stderr)
		}
		t.Skipf("step 1's generator was invalid on this host (%v): no capacity to judge the abort after", v.Reasons())
	}
	met := stats.Qualifies(step1, l.GoodFractionTarget)
	if why := hostStarvedJSON(ladderresult.HostJSONOf(step1.Validity.Host)); r.code != exitOK && !met && why != "" {
		t.Skipf("step 1 (TTFT p95 %s, good fraction %.2f) missed the gate against a simulator on a starved host (%s): no capacity to judge the abort after",
			step1.TTFT.P95, step1.GoodFraction, why)
	}
	if r.code != exitOK {
		t.Fatalf("exit %d with step 1 valid (met %v, TTFT p95 %s, good fraction %.2f, saturated %v %+v):\n%s",
			r.code, met, step1.TTFT.P95, step1.GoodFraction, step1.Saturated(), step1.Steady, r.stderr)
	}
	const rule = "mid-step: TTFT p95 above 2 × gate 1s"
	if !strings.Contains(r.stderr, "exit 0: capacity 5 req/s (step 1, ") ||
		!strings.Contains(r.stderr, "the ladder ended at its abort rule: step 2: "+rule) {
		t.Errorf("stderr does not give the capacity and the abort:\n%s", r.stderr)
	}
	if !l.Aborted || l.CapacityStep != 1 || len(l.Steps) != 2 || !strings.Contains(l.Steps[1].AbortReason, rule) {
		t.Errorf("report: aborted %v, capacity step %d, %d steps, step 2 abort %q; want step 2 aborted by %q after step 1's capacity",
			l.Aborted, l.CapacityStep, len(l.Steps), l.Steps[len(l.Steps)-1].AbortReason, rule)
	}
}
