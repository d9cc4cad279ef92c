package wiring

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/budget"
	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// The dispatch plan of a target: each random stream draws from the
// target's seed (baseline.seed, or one derived from its name), offset per
// class, so every class and every purpose has its own reproducible stream
// and class 0 uses the seed itself.
const (
	mixSeedStep       = 7919   // prompts and lengths
	injectionSeedStep = 104729 // which requests are cancelled
)

// Seed is the target's seed: baseline.seed, or one derived from its name
// when that is 0 (config.SeedFor).
func Seed(t config.Target) uint64 { return config.SeedFor(t.Name, t.Baseline.Seed) }

// Mix is class i's own stream of prompts and lengths (one mix per class, so
// a class's requests do not depend on the others').
func Mix(t config.Target, c workload.Class, i int) (*workload.Mix, error) {
	m, err := workload.NewMix(Seed(t)+uint64(i)*mixSeedStep, []workload.Class{c})
	if err != nil {
		return nil, fmt.Errorf("classes[%d]: %w", i, err)
	}
	return m, nil
}

// Retry is the target's retry policy (retries.*); off when max_attempts is
// 0 or 1.
func Retry(t config.Target) (dispatch.Retry, error) {
	r := t.Retries
	out := dispatch.Retry{MaxAttempts: r.MaxAttempts, Backoff: r.Backoff.D(), MaxBackoff: r.MaxBackoff.D(),
		Jitter: r.Jitter, Seed: Seed(t)}
	if err := out.Validate(); err != nil {
		return dispatch.Retry{}, fmt.Errorf("retries: %w", err)
	}
	return out, nil
}

// Backoff is the wait after failures (retries.backoff, max_backoff,
// jitter): between a failed attempt and its retry, and for a closed-loop
// user after a failed request.
func Backoff(t config.Target) dispatch.Backoff {
	r := t.Retries
	return dispatch.Backoff{Base: r.Backoff.D(), Max: r.MaxBackoff.D(), Jitter: r.Jitter, Seed: Seed(t)}
}

// Injection is class i's cancellation injection (cancellation.*); ok is
// false when cancellation.fraction is 0.
func Injection(t config.Target, i int) (in dispatch.Injection, ok bool) {
	c := t.Cancellation
	if c.Fraction <= 0 {
		return dispatch.Injection{}, false
	}
	return dispatch.Injection{Fraction: c.Fraction, Delay: c.Delay.D(), MaxDelay: c.MaxDelay.D(),
		Seed: Seed(t) + uint64(i)*injectionSeedStep}, true
}

// Budget is the target's daily budget (budget.*); ok is false when it sets
// no limit.
func Budget(t config.Target) (l budget.Limits, ok bool, err error) {
	b := t.Budget
	if b.TokensPerDay <= 0 && b.RequestsPerDay <= 0 {
		return budget.Limits{}, false, nil
	}
	zone, err := time.LoadLocation(b.Zone)
	if err != nil {
		return budget.Limits{}, false, fmt.Errorf("budget.zone: %w", err)
	}
	return budget.Limits{TokensPerDay: b.TokensPerDay, RequestsPerDay: b.RequestsPerDay, Zone: zone}, true, nil
}

// Arrivals is class i's open-loop arrival schedule at rate req/s, by the
// baseline's arrival process.
func Arrivals(t config.Target, i int, rate float64) (*schedule.Sequence, error) {
	return schedule.New(schedule.Spec{Kind: t.Baseline.Arrival, Burstiness: t.Baseline.Burstiness, Seed: Seed(t) + uint64(i)}, schedule.Step{Rate: rate})
}

// BaselinePlan is one class's share of a target's baseline stream.
type BaselinePlan struct {
	Rate float64 // req/s: baseline.rate split by class weight
	// Open is the stream without what the run adds: Start, Meta, Exec and
	// Admit.
	Open dispatch.OpenConfig
}

// Baseline plans class i's baseline stream among classes (their weights
// split baseline.rate).
func Baseline(t config.Target, classes []workload.Class, i int) (BaselinePlan, error) {
	rate := workload.Weights(classes).Share(t.Baseline.Rate, i)
	seq, err := Arrivals(t, i, rate)
	if err != nil {
		return BaselinePlan{}, err
	}
	r, err := Retry(t)
	if err != nil {
		return BaselinePlan{}, err
	}
	return BaselinePlan{Rate: rate, Open: dispatch.OpenConfig{Arrivals: seq, MaxInFlight: t.MaxInFlight, Retry: r}}, nil
}
