package main

import (
	"log/slog"
	"math"
	"os"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// memLimitRatio is the share of the container's memory limit Go's soft
// limit is set to: the rest is room for what the collector does not
// count (goroutine stacks' slack, the kernel's page cache of the ledger
// files). docs/scale.md#memory measured it at 1,000 targets.
const memLimitRatio = 0.9

// setMemoryLimit sets Go's soft memory limit (GOMEMLIMIT) to 90 % of the
// cgroup's memory limit, so that a prober in a container collects harder
// before the kernel kills it: without a limit Go lets the heap reach twice
// the live heap, and every scrape adds its garbage (docs/scale.md). A
// GOMEMLIMIT or AUTOMEMLIMIT in the environment wins (automemlimit's
// rules); without a cgroup limit nothing changes. provider is nil in
// production (the cgroup); tests pass their own.
func setMemoryLimit(log *slog.Logger, provider memlimit.Provider) {
	if os.Getenv("GOMEMLIMIT") != "" {
		log.Info("Go memory limit from GOMEMLIMIT", "bytes", debug.SetMemoryLimit(-1))
		return
	}
	opts := []memlimit.Option{memlimit.WithRatio(memLimitRatio)}
	if provider != nil {
		opts = append(opts, memlimit.WithProvider(provider))
	}
	limit, err := memlimit.Set(opts...)
	switch {
	case err != nil:
		log.Debug("no container memory limit read: Go's memory limit unchanged", "err", err)
	case limit == math.MaxInt64:
		log.Debug("no container memory limit: Go's memory limit unchanged")
	default:
		log.Info("Go memory limit set", "bytes", limit, "of_container_limit", memLimitRatio)
	}
}
