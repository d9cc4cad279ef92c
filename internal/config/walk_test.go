package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/schedule"
)

// TestWalkParsesValuesOnce: walk parses each value that parses itself by
// its own UnmarshalText and hands decoding the parsed value (so nothing
// parses it again); a value that does not parse keeps its text and is
// reported on its key.
func TestWalkParsesValuesOnce(t *testing.T) {
	el := &errorList{src: func(string) string { return "f.yaml" }}
	raw := map[string]any{"step_duration": "20s", "arrival": "GAMMA", "stop_at": "knee", "gap": "soon", "steps": []any{1, 2}}
	walk(el, "targets[0].ladder", raw, reflect.TypeOf(Ladder{}))
	if got, ok := raw["step_duration"].(Duration); !ok || got.D() != 20*time.Second {
		t.Errorf("step_duration left as %T %v, want Duration 20s", raw["step_duration"], raw["step_duration"])
	}
	if got, ok := raw["arrival"].(schedule.Kind); !ok || got != schedule.Gamma {
		t.Errorf("arrival left as %T %v, want schedule.Gamma", raw["arrival"], raw["arrival"])
	}
	if got, ok := raw["stop_at"].(ladder.StopAt); !ok || got != ladder.StopAtKnee {
		t.Errorf("stop_at left as %T %v, want ladder.StopAtKnee", raw["stop_at"], raw["stop_at"])
	}
	if raw["gap"] != "soon" || len(el.errs) != 1 || el.errs[0].Key != "targets[0].ladder.gap" || !strings.Contains(el.errs[0].Msg, "invalid duration") {
		t.Errorf("gap: raw %v, errors %v", raw["gap"], el.errs)
	}
	delete(raw, "gap")
	c := &Config{}
	if err := decode(map[string]any{"targets": []any{map[string]any{"ladder": raw}}}, c, false); err != nil {
		t.Fatalf("decoding parsed values: %v", err)
	}
	l := c.Targets[0].Ladder
	if l.StepDuration.D() != 20*time.Second || l.Arrival != schedule.Gamma || l.StopAt != ladder.StopAtKnee {
		t.Errorf("decoded %s %q %q", l.StepDuration, l.Arrival, l.StopAt)
	}
}
