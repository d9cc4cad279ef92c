package wiring

import (
	"fmt"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// Class converts one class to a workload.Class, loading its prompt file or
// empirical distribution when it has one; a canary class's checks are its
// prompts (workload.CheckParams). key names the class in errors
// (e.g. "targets[0].classes[1]").
func Class(c config.Class, key string) (workload.Class, error) {
	ps, err := c.Prompt.Build(key + ".prompt")
	if err != nil {
		return workload.Class{}, err
	}
	var in workload.LengthDist
	if ps.NeedsInputLength() || c.Session.Enabled() { // a session's later user messages are synthetic
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
		Gates: c.Gates, CacheBustFraction: c.CacheBustFraction,
		Checks: c.Checks, RecordExcerpt: c.RecordAnswers == config.RecordAnswersExcerpt,
	}, nil
}

// Classes converts every class of the target (targets[index] in errors),
// followed by the cold twin of each shared-prefix class (withColdTwins).
func Classes(t config.Target, index int) ([]workload.Class, error) {
	out := make([]workload.Class, 0, len(t.Classes))
	for i, c := range t.Classes {
		wc, err := Class(c, fmt.Sprintf("targets[%d].classes[%d]", index, i))
		if err != nil {
			return nil, err
		}
		out = append(out, wc)
	}
	return withColdTwins(t, out)
}
