package report

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
)

// TestLadderTextNamesIdentity: the text report names the identity a ladder
// was measured on and, for a ladder a deploy cut, says it is partial and a
// lower bound of the old identity.
func TestLadderTextNamesIdentity(t *testing.T) {
	v1, v2 := ladderresult.Identity{Model: "m", Version: "v1"}, ladderresult.Identity{Model: "m", Version: "v2"}
	for _, tc := range []struct {
		name     string
		res      ladderresult.LadderResult
		want     []string
		unwanted []string
	}{
		{"complete", ladderresult.LadderResult{Identity: v1, GoodFractionTarget: 0.9, KneeFactor: 2},
			[]string{"identity: model m version v1"}, []string{"PARTIAL"}},
		{"deploy", ladderresult.LadderResult{Identity: v1, Partial: cause.IdentityChanged, ChangedTo: v2, GoodFractionTarget: 0.9, KneeFactor: 2},
			[]string{"identity: model m version v1", "PARTIAL ladder (identity_changed)", "(to model m version v2)", "LOWER BOUND of it"}, nil},
		{"restart", ladderresult.LadderResult{Partial: cause.TargetRestarted, GoodFractionTarget: 0.9, KneeFactor: 2},
			[]string{"PARTIAL ladder (target_restarted): the target restarted", "the identity it began on"}, []string{"identity: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := LadderText(&b, tc.res); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("text lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.unwanted {
				if strings.Contains(b.String(), w) {
					t.Errorf("text has %q:\n%s", w, b.String())
				}
			}
		})
	}
}
