package config

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// StatsGates returns the class gates in stats' terms.
func (g Gates) StatsGates() stats.Gates {
	return stats.Gates{TTFT: time.Duration(g.TTFT), TPOT: time.Duration(g.TPOT), E2E: time.Duration(g.E2E)}
}

// Workload converts the class to a workload.Class, loading its prompt file
// or empirical distribution when it has one. key names the class in errors
// (e.g. "targets[0].classes[1]").
func (c Class) Workload(key string) (workload.Class, error) {
	ps, err := c.Prompt.Build(key + ".prompt")
	if err != nil {
		return workload.Class{}, err
	}
	var in workload.LengthDist
	if ps.NeedsInputLength() {
		if in, err = c.Input.Build(key + ".input"); err != nil {
			return workload.Class{}, err
		}
	}
	out, err := c.Output.Build(key + ".output")
	if err != nil {
		return workload.Class{}, err
	}
	return workload.Class{
		Name: c.Name, Weight: c.Weight, Prompt: ps, InputLen: in, OutputLen: out,
		Gates: c.Gates.StatsGates(), CacheBustFraction: c.CacheBustFraction,
	}, nil
}

// WorkloadClasses converts every class of the target.
func (t Target) WorkloadClasses(targetIndex int) ([]workload.Class, error) {
	out := make([]workload.Class, 0, len(t.Classes))
	for i, c := range t.Classes {
		wc, err := c.Workload(fmt.Sprintf("targets[%d].classes[%d]", targetIndex, i))
		if err != nil {
			return nil, err
		}
		out = append(out, wc)
	}
	return out, nil
}
