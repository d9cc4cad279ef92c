package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestInterrupt: a first interrupt ends the arrivals early and drains; a
// second one cuts the drain short. Either way the exit code is 0, the report
// is printed over the arrivals actually planned, and the ledger holds every
// one of them with a terminal outcome.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	const window = 10 * time.Second
	tests := []struct {
		name string
		// extra flags; the soft interrupt comes at 1.5 s, the hard one (if
		// any) at 2 s.
		args    []string
		hard    bool
		outcome ledger.Outcome
		reason  ledger.Reason
	}{
		// In-flight requests finish during the drain.
		{"soft", nil, false, ledger.OK, ""},
		// The simulator stalls for the whole run: nothing finishes, and
		// the second interrupt cancels what is in flight.
		{"hard", []string{"--sim-stall", "0s+60s"}, true, ledger.Cancelled, ledger.ReasonInterrupted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := tempPath(t, "interrupted.jsonl")
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			hard, cancelHard := context.WithCancel(t.Context())
			defer cancelHard()
			soft := time.AfterFunc(1500*time.Millisecond, cancel)
			defer soft.Stop()
			if tc.hard {
				h := time.AfterFunc(2*time.Second, cancelHard)
				defer h.Stop()
			}
			args := append([]string{"probe", "--rate", "10", "--arrival", "constant", "--duration", window.String(),
				"--max-tokens", "16", "--json", "--ledger", path}, tc.args...)
			began := time.Now()
			r := invokeHard(ctx, hard, args...)
			took := time.Since(began)
			// Soft: requests finished (exit 0, or 4 when this machine made
			// the generator late); hard: every request was cancelled, so
			// none succeeded (exit 3).
			want := []int{exitOK, exitGeneratorInvalid}
			if tc.hard {
				want = []int{exitNoSuccess}
			}
			if !slices.Contains(want, r.code) || strings.Contains(r.stderr, "INVARIANT VIOLATED") {
				t.Fatalf("exit code %d, want one of %v\nstderr:\n%s", r.code, want, r.stderr)
			}
			// Not a speed assertion: the window alone would take 10 s, and
			// the hard case's 30 s drain longer still.
			if took > window*8/10 {
				t.Errorf("took %v: the interrupt did not end the run", took)
			}
			p := decodeProbe(t, r)
			_, recs := readLedger(t, path)
			checkLedgerInvariants(t, recs)
			if p.Planned != len(recs) || p.Planned == 0 {
				t.Fatalf("report planned %d, ledger %d records", p.Planned, len(recs))
			}
			if p.WindowSeconds >= window.Seconds() || p.WindowSeconds < 1 {
				t.Errorf("window %.3fs: want the ≈1.5 s that ran, not the %v asked for", p.WindowSeconds, window)
			}
			if !strings.Contains(strings.Join(p.Notes, " "), "interrupted") {
				t.Errorf("notes %q do not say the run was interrupted", p.Notes)
			}
			var lastPlanned time.Duration
			end := time.Duration(p.WindowSeconds * float64(time.Second))
			atStop := 0
			for _, rec := range recs {
				lastPlanned = max(lastPlanned, rec.Planned)
				// An arrival due as the interrupt lands may be reached by
				// the generator only after the stop: it is recorded
				// unsent/shutdown, never dropped. Only one 100 ms slot
				// before the stop may end so.
				if rec.Outcome == ledger.Unsent && rec.Reason == ledger.ReasonShutdown && rec.Planned >= end-150*time.Millisecond {
					atStop++
					continue
				}
				if rec.Outcome != tc.outcome || (tc.reason != "" && rec.Reason != tc.reason) {
					t.Errorf("record %d: %s/%s, want %s/%s", rec.ID, rec.Outcome, rec.Reason, tc.outcome, tc.reason)
				}
			}
			if atStop > 1 {
				t.Errorf("%d arrivals unsent/shutdown at the stop, want at most 1", atStop)
			}
			// Planned offsets count from the run's epoch, the window from
			// the schedule's start a few ms later: allow one arrival slot.
			if lastPlanned > end+100*time.Millisecond {
				t.Errorf("a record planned at %v, after the %.3fs window", lastPlanned, p.WindowSeconds)
			}
			if p.Outcomes[string(tc.outcome)]+p.Outcomes[string(ledger.Unsent)] != len(recs) || p.Outcomes[string(ledger.Unsent)] != atStop {
				t.Errorf("report counts %d %s and %d unsent, ledger %d records (%d unsent at the stop)",
					p.Outcomes[string(tc.outcome)], tc.outcome, p.Outcomes[string(ledger.Unsent)], len(recs), atStop)
			}
			// A constant 10 req/s schedule cut at ≈1.5 s plans ≈15 arrivals.
			if len(recs) < 10 || len(recs) > 20 {
				t.Errorf("%d planned arrivals before a 1.5 s interrupt at 10 req/s", len(recs))
			}
		})
	}
}
