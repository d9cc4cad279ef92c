package statuspage

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestLadderQueuedState: a ladder waiting its turn shows on the card's
// activity line with how many wait before it, its trigger and since when;
// a running ladder is said before a queued one, and no queue says nothing
// of one.
func TestLadderQueuedState(t *testing.T) {
	now := time.Date(2026, 12, 4, 23, 0, 0, 0, time.UTC)
	q := &LadderQueued{Ahead: 3, Trigger: "schedule", Since: now.Add(-2 * time.Minute)}
	for _, tc := range []struct {
		name string
		in   TargetInput
		want string
	}{
		{"queued", TargetInput{Queued: q}, "ladder queued: 3 ahead of it (schedule, due since 22:58 UTC; limits.max_concurrent_ladders)"},
		{"first in line", TargetInput{Queued: &LadderQueued{Trigger: "identity_change", Since: now}},
			"ladder queued: 0 ahead of it (identity_change, due since 23:00 UTC; limits.max_concurrent_ladders)"},
		{"running", TargetInput{Queued: q, Ladder: &LadderProgress{Step: 1, Steps: 2, Rate: 4}}, "ladder step 1/2 at 4 req/s"},
		{"none", TargetInput{}, "probing"},
	} {
		tc.in.Name, tc.in.Verdict = "t", verdict.Validity{Valid: true}
		st := Build(Input{Now: now, Targets: []TargetInput{tc.in}})
		if got := st.Targets[0].State; got != tc.want {
			t.Errorf("%s: state %q, want %q", tc.name, got, tc.want)
		}
	}
}
