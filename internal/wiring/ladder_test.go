package wiring

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
)

func TestFromExampleConfigs(t *testing.T) {
	for _, f := range []string{"../../config/simulator.yaml", "../../config/vllm.yaml"} {
		c, err := config.LoadWith(config.Options{Path: f, Environ: func() []string { return nil }})
		if err != nil {
			t.Fatal(err)
		}
		tg := c.Targets[0]
		lc, sch, err := Ladder(tg, c.Limits)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ladder.New(lc, dispatch.NewGroup(ledger.New(time.Now())), func(context.Context, *ledger.Record, func()) ledger.Result {
			return ledger.Result{}
		}); err != nil {
			t.Errorf("%s: the ladder runner refuses a validated config: %v", f, err)
		}
		next, err := ladder.Next(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), sch)
		if err != nil || !next.After(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: next run %v, %v", f, next, err)
		}
		if lc.Seed == 0 || lc.MaxRate != tg.Ladder.MaxRate || lc.Settle != tg.Timeouts.Total.D() || len(lc.Classes) != len(tg.Classes) ||
			lc.Validity.MaxLagP99 != tg.Ladder.MaxLagP99.D() || lc.Validity.MaxLagP99 == 0 {
			t.Errorf("%s: conversion: %+v", f, lc)
		}
	}
}

// TestTTFTBoundaryPlanned: the target's ttft_boundary goes from the config
// into the ladder's Config (the ladder stamps it on every record it plans:
// ladder's TestTTFTBoundaryPlanned).
func TestTTFTBoundaryPlanned(t *testing.T) {
	c, err := config.LoadWith(config.Options{Path: "../../config/simulator.yaml", Environ: func() []string { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	tg := c.Targets[0]
	tg.TTFTBoundary = "any_token"
	lc, _, err := Ladder(tg, c.Limits)
	if err != nil {
		t.Fatal(err)
	}
	if lc.TTFTBoundary != ledger.TTFTAnyToken {
		t.Fatalf("Ladder TTFTBoundary = %q, want %q", lc.TTFTBoundary, ledger.TTFTAnyToken)
	}
	// A bad boundary never reaches Ladder from a file (ledger.TTFTBoundary
	// refuses it on its key as it is loaded); one set in Go is refused by
	// the runner's constructor.
	tg.TTFTBoundary = "bogus"
	lc, _, err = Ladder(tg, c.Limits)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ladder.New(lc, dispatch.NewGroup(nil), nil); err == nil || !strings.Contains(err.Error(), `unknown TTFT boundary "bogus"`) {
		t.Errorf("ladder.New with ttft_boundary bogus: %v", err)
	}
}
