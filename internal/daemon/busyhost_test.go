package daemon

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/fleet"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/statuspage"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// validOrHost checks a ladder whose test needs an on-schedule generator:
// every step valid, or invalid only for the prober's host (verdict.HostCaused:
// a busy machine, not a fault of the code under test). Any other invalid
// step fails the test. It reports whether a host-caused invalid step was
// seen, and says so; the caller then skips what needs every step (the
// capacity, the number of steps run).
func validOrHost(t *testing.T, name string, res ladder.Result) (hostInvalid bool) {
	t.Helper()
	for _, s := range res.Steps {
		switch {
		case s.Summary.Validity.Valid:
		case verdict.HostCaused(s.Summary.Validity.Causes):
			hostInvalid = true
		default:
			t.Fatalf("%s: step %d invalid (%s), not for the prober host: %s", name, s.Index, strings.Join(s.Summary.Validity.CauseNames(), ", "), strings.Join(s.Summary.Validity.Reasons(), "; "))
		}
	}
	if hostInvalid {
		t.Logf("%s: step(s) %s invalid for the prober host (a busy machine): the figures that need every step are not asserted", name, statuspage.InvalidSteps(res))
	}
	return hostInvalid
}

// shareValidOrHost reports whether a fleet shard's share was valid or
// invalid only for its host.
func shareValidOrHost(s fleet.ShardStep) bool {
	if s.Valid {
		return true
	}
	for _, c := range s.InvalidCauses {
		if !cause.Cause(c).IsHost() {
			return false
		}
	}
	return len(s.InvalidCauses) > 0
}
