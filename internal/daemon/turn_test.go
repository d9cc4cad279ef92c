package daemon

import "testing"

// TestInTurn: up to maxTurnTargets every target is refreshed at every
// tick; beyond, each is refreshed exactly once in every ⌈n/max⌉
// consecutive ticks, and a tick refreshes at most maxTurnTargets of them.
func TestInTurn(t *testing.T) {
	for _, tc := range []struct{ targets, every int }{
		{1, 1}, {maxTurnTargets, 1}, {maxTurnTargets + 1, 2}, {1000, 4}, {10000, 40},
	} {
		runs := make([]*targetRun, tc.targets)
		for i := range runs {
			runs[i] = &targetRun{index: i}
		}
		seen := make([]int, tc.targets)
		for tick := uint64(7); tick < 7+uint64(tc.every); tick++ {
			n := 0
			for i, r := range runs {
				if inTurn(r, tick, len(runs)) {
					seen[i]++
					n++
				}
			}
			if n > maxTurnTargets {
				t.Errorf("%d targets: tick %d refreshed %d, more than %d", tc.targets, tick, n, maxTurnTargets)
			}
		}
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("%d targets: target %d refreshed %d times in %d ticks, want once", tc.targets, i, c, tc.every)
			}
		}
	}
}
