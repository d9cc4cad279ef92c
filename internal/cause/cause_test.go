package cause

import (
	"slices"
	"testing"
)

// TestTable: every cause has one row, a kind, words for what it means and
// what to do, and a badge; the lists partition the table by kind; host
// causes are generator causes.
func TestTable(t *testing.T) {
	seen := map[Cause]bool{}
	for _, e := range Table {
		if seen[e.Name] {
			t.Errorf("%s: two rows", e.Name)
		}
		seen[e.Name] = true
		if e.Meaning == "" || e.Action == "" || e.Badge == "" {
			t.Errorf("%s: meaning %q, action %q, badge %q", e.Name, e.Meaning, e.Action, e.Badge)
		}
		if e.Name.Action() != e.Action || e.Name.Meaning() != e.Meaning || e.Name.IsHost() != e.Host || e.Name.Badge() != e.Badge {
			t.Errorf("%s: its methods disagree with its row", e.Name)
		}
		if e.Host && e.Kind != KindGenerator {
			t.Errorf("%s: a host cause of kind %s", e.Name, e.Kind)
		}
	}
	if n := len(Generator) + len(Step) + len(Fleet); n != len(Table) {
		t.Errorf("%d causes in the kind lists, %d in the table: a row of no known kind", n, len(Table))
	}
	for _, c := range Host {
		if !slices.Contains(Generator, c) {
			t.Errorf("host cause %s is not a generator cause", c)
		}
	}
	if !slices.Equal(Host, []Cause{HostStarved, CgroupThrottled}) {
		t.Errorf("host causes %v", Host)
	}
	if got := Join(Generator); got != "host_starved, cgroup_throttled, dispatch_lag, in_flight_cap, rate_not_reached" {
		t.Errorf("generator causes %q (a metric label's values: a change is a breaking one)", got)
	}
	unknown := Cause("exploded")
	if _, ok := Lookup(unknown); ok || unknown.Action() != "" || unknown.IsHost() || unknown.Badge() != "exploded" {
		t.Errorf("an unknown cause found in the table")
	}
}
