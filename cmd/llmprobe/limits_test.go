package main

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOneShotLimitsRefused (issue 26): every limit of the configuration
// holds for the one-shot commands, checked by the same rules as the
// daemon's file: a flag past a limit exits 2 before anything is sent,
// naming the flag, the limit's key and how far it may be raised.
func TestOneShotLimitsRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		limit string
		args  []string
		want  []string
	}{
		{"limits.max_rate", []string{"probe", "--rate", "20000", "--duration", "1s"},
			[]string{"--rate: 20000 req/s is above the hard maximum 100 req/s", "--max-rate (limits.max_rate)", "raised up to 10000"}},
		{"limits.max_rate", []string{"probe", "--rate", "101"}, []string{"--rate: 101 req/s", "hard maximum 100"}},
		{"limits.max_rate raised", []string{"probe", "--rate", "300", "--max-rate", "200"}, []string{"--rate: 300 req/s", "hard maximum 200"}},
		{"limits.max_rate ceiling", []string{"probe", "--rate", "20000", "--max-rate", "20000"},
			[]string{"--max-rate (limits.max_rate): want above 0 and at most 10000 req/s, got 20000"}},
		{"limits.max_rate, closed loop", []string{"probe", "--closed-loop-users", "2", "--rate", "500"}, []string{"--rate: 500 req/s"}},
		{"limits.max_buffered_bytes", []string{"probe", "--max-buffered-bytes", "1000"}, []string{"--max-buffered-bytes (limits.max_buffered_bytes)", "1000"}},
		{"max_event_bytes within limits.max_buffered_bytes", []string{"probe", "--max-event-bytes", "2097152", "--max-buffered-bytes", "1048576"},
			[]string{"--max-event-bytes", "--max-buffered-bytes (limits.max_buffered_bytes) of at least"}},
		{"max_in_flight", []string{"probe", "--max-in-flight", "100001"}, []string{"--max-in-flight", "100001"}},
		{"timeouts.total", []string{"probe", "--timeout-total", "0s"}, []string{"--timeout-total: must be above 0"}},
		{"timeouts within total", []string{"probe", "--timeout-total", "2s", "--timeout-headers", "3s"}, []string{"--timeout-headers: 3s is longer than --timeout-total 2s"}},
		{"retries", []string{"probe", "--retries", "10"}, []string{"--retries", "0..9"}},
		{"ladder: limits.max_rate", []string{"ladder", "--steps", "1,101"}, []string{"--steps: 101 req/s is above the hard maximum 100", "--max-rate (limits.max_rate)"}},
		{"ladder: limits.max_rate raised", []string{"ladder", "--steps", "1,300", "--max-rate", "200"}, []string{"--steps: 300 req/s", "hard maximum 200"}},
		{"ladder: limits.max_rate ceiling", []string{"ladder", "--max-rate", "20000"}, []string{"--max-rate (limits.max_rate): want above 0 and at most 10000"}},
		{"ladder: limits.max_buffered_bytes", []string{"ladder", "--max-buffered-bytes", "1000"}, []string{"--max-buffered-bytes (limits.max_buffered_bytes)"}},
		{"ladder: max_in_flight", []string{"ladder", "--max-in-flight", "-1"}, []string{"--max-in-flight"}},
		{"ladder: step_duration", []string{"ladder", "--step-duration", "500ms"}, []string{"--step-duration", "at least 1s"}},
		{"ladder: timeouts.total", []string{"ladder", "--timeout-total", "0s"}, []string{"--timeout-total: must be above 0"}},
	}
	for _, tc := range tests {
		t.Run(tc.limit+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a command that started probing is caught
			defer cancel()
			r := invoke(ctx, tc.args...)
			if r.code != exitUsage {
				t.Fatalf("exit %d, want %d (refused before anything is sent)\nstderr: %s", r.code, exitUsage, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

// TestOneShotRateThroughThePlan: the rate a one-shot command sends is the
// one its configuration validated (baseline.rate, ladder.steps), carried
// by the same plan the daemon builds; --max-rate raises the limit up to
// its ceiling, and a rate at the limit is accepted.
func TestOneShotRateThroughThePlan(t *testing.T) {
	t.Parallel()
	e := env{stdout: io.Discard, stderr: io.Discard}
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		args []string
		rate float64
	}{
		{nil, 5},
		{[]string{"--rate", "100"}, 100},
		{[]string{"--rate", "150", "--max-rate", "200"}, 150},
		{[]string{"--rate", "10000", "--max-rate", "10000"}, 10000},
	} {
		var p probeFlags
		fs := newFlagSet("probe", e)
		p.register(fs)
		if err := parseFlags(fs, tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if err := p.validate(); err != nil {
			t.Fatalf("%v: refused: %v", tc.args, err)
		}
		plan, err := p.target.plan(placeholderURL, log, false)
		if err != nil {
			t.Fatalf("%v: plan: %v", tc.args, err)
		}
		plan.Close()
		if plan.Target.Baseline.Rate != tc.rate {
			t.Errorf("probe %v: the plan sends %g req/s, want %g", tc.args, plan.Target.Baseline.Rate, tc.rate)
		}
	}
	l, err := parseLadderFlags(e, []string{"--steps", "1,150", "--max-rate", "200"})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := l.t.plan(placeholderURL, log, true)
	if err != nil {
		t.Fatal(err)
	}
	plan.Close()
	if plan.Ladder.MaxRate != 200 || !slices.Equal(plan.Ladder.Steps, []float64{1, 150}) {
		t.Errorf("ladder plan: max rate %g, steps %v; want 200, [1 150]", plan.Ladder.MaxRate, plan.Ladder.Steps)
	}
}
