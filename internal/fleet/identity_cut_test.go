package fleet

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestCutMergedStep: a merged step is cut (invalid with the cause, aborted)
// when a shard's share met a deploy or a restart, or the coordinator saw
// the identity move from the ladder's; otherwise it stands, with its
// identities recorded.
func TestCutMergedStep(t *testing.T) {
	v1, v2 := ladderresult.Identity{Model: "m", Version: "v1"}, ladderresult.Identity{Model: "m", Version: "v2"}
	report := func(c cause.Cause) *StepReport {
		return &StepReport{Causes: []verdict.InvalidCause{{Cause: c, Reason: "seen by the shard"}}}
	}
	for _, tc := range []struct {
		name      string
		reports   map[int]*StepReport
		end       ladderresult.Identity
		want      cause.Cause
		wantInWhy string
	}{
		{"unchanged", map[int]*StepReport{0: {}, 1: {}}, v1, "", ""},
		{"shard 1 saw the deploy first", map[int]*StepReport{0: {}, 1: report(cause.IdentityChanged)}, v1, cause.IdentityChanged, "shard 1: seen by the shard"},
		{"shard 0 met a restart", map[int]*StepReport{0: report(cause.TargetRestarted)}, v1, cause.TargetRestarted, "shard 0:"},
		{"the coordinator saw it", map[int]*StepReport{0: {}, 1: {}}, v2, cause.IdentityChanged, "model m version v1 → model m version v2"},
		{"a host cause is no cut", map[int]*StepReport{1: report(cause.HostStarved)}, v1, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls := ladderresult.LadderStep{Index: 2, Summary: stats.Summary{Validity: verdict.Validity{Valid: true}}}
			cut(&ls, gathered{reports: tc.reports}, 2, v1, v1, tc.end)
			if got := ls.CutCause(); got != tc.want {
				t.Fatalf("cut %q, want %q", got, tc.want)
			}
			if ls.IdentityStart != v1 || ls.IdentityEnd != tc.end {
				t.Errorf("identities %s → %s", ls.IdentityStart, ls.IdentityEnd)
			}
			if tc.want == "" {
				if !ls.Summary.Validity.Valid || ls.Aborted {
					t.Errorf("valid %v aborted %v: want the step to stand", ls.Summary.Validity.Valid, ls.Aborted)
				}
				return
			}
			if ls.Summary.Validity.Valid || !ls.Aborted || !strings.Contains(strings.Join(ls.Summary.Validity.Reasons(), "; "), tc.wantInWhy) {
				t.Errorf("valid %v aborted %v reasons %v", ls.Summary.Validity.Valid, ls.Aborted, ls.Summary.Validity.Reasons())
			}
		})
	}
}
