package wiring

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// Ladder builds a ladder Config and its Schedule from a validated
// target. The caller adds Admit, Progress and Now. The hard maximum is the
// target's ladder.max_rate, or limits.max_rate when that is unset. The seed
// is ladder.seed, or one derived from the target name when it is 0.
func Ladder(t config.Target, limits config.Limits) (ladder.Config, ladder.Schedule, error) {
	l := t.Ladder
	max := l.MaxRate
	if max == 0 {
		max = limits.MaxRate
	}
	seed := config.SeedFor(t.Name, l.Seed)
	classes := make([]ladder.Class, len(t.Classes))
	for i, c := range t.Classes {
		classes[i] = ladder.Class{Name: c.Name, Weight: c.Weight, Gates: c.Gates}
	}
	cfg := ladder.Config{
		Target: t.Name, API: t.API, Classes: classes, TTFTBoundary: t.TTFTBoundary,
		Steps: append([]float64(nil), l.Steps...), StepDuration: l.StepDuration.D(), Gap: l.Gap.D(),
		MaxRate: max, Arrival: l.Arrival, Burstiness: l.Burstiness, Seed: seed, MaxInFlight: t.MaxInFlight,
		Abort: ladder.AbortRules{
			ErrorFraction: l.Abort.ErrorFraction, RejectionFraction: l.Abort.RejectionFraction,
			TTFTGateMultiple: l.Abort.TTFTGateMultiple, OnUnsent: l.Abort.OnUnsent,
			UnsentFraction: l.Abort.UnsentFraction, OnGeneratorInvalid: l.Abort.OnGeneratorInvalid,
		},
		GoodFractionTarget: l.GoodFractionTarget, KneeFactor: l.KneeFactor, StopAt: l.StopAt,
		Validity: Validity(l),
		Settle:   t.Timeouts.Total.D(), HistoryFile: l.HistoryFile,
	}
	var zone *time.Location
	if l.Schedule.Zone != "" {
		z, err := time.LoadLocation(l.Schedule.Zone)
		if err != nil {
			return ladder.Config{}, ladder.Schedule{}, fmt.Errorf("ladder for target %s: schedule.zone: %w", t.Name, err)
		}
		zone = z
	}
	sch := ladder.Schedule{Every: l.Schedule.Every.D(), Offset: l.Schedule.Offset.D(), Daily: l.Schedule.Daily, Zone: zone}
	return cfg, sch, nil
}

// Validity is the generator-validity rule's configuration from a target's
// ladder section (its thresholds judge the probe, every ladder step and
// the daemon's live verdict).
func Validity(l config.Ladder) verdict.ValidityConfig {
	return verdict.ValidityConfig{MaxLagP99: l.MaxLagP99.D(), RateTolerance: l.RateTolerance,
		LagConfidence: l.LagConfidence, LagHardFactor: l.LagHardFactor}
}
