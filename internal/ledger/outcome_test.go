package ledger

import (
	"strings"
	"testing"
)

// The sets are closed and every reason refines exactly one outcome.
func TestOutcomeReasonSetsClosed(t *testing.T) {
	if len(Outcomes) != len(reasonsFor) {
		t.Errorf("Outcomes lists %d outcomes, reasonsFor has %d", len(Outcomes), len(reasonsFor))
	}
	owner := map[Reason]Outcome{}
	for _, o := range Outcomes {
		rs := ReasonsFor(o)
		if len(rs) == 0 {
			t.Errorf("outcome %s has no reasons", o)
		}
		for _, r := range rs {
			if prev, dup := owner[r]; dup {
				t.Errorf("reason %s belongs to both %s and %s", r, prev, o)
			}
			owner[r] = o
			if err := Check(o, r); err != nil || !Valid(o, r) {
				t.Errorf("Check(%s, %s) = %v", o, r, err)
			}
		}
	}
	for r, o := range owner {
		for _, other := range Outcomes {
			if other != o && Valid(other, r) {
				t.Errorf("reason %s also valid for %s", r, other)
			}
		}
	}
}

func TestCheckNamesThePair(t *testing.T) {
	for _, tc := range []struct {
		o    Outcome
		r    Reason
		want string
	}{
		{"exploded", ReasonStop, `unknown outcome "exploded"`},
		{OK, ReasonDrainDeadline, `reason "drain_deadline" does not belong to outcome "ok"`},
		{Censored, "", `reason "" does not belong to outcome "censored"`},
	} {
		if err := Check(tc.o, tc.r); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%q, %q) = %v, want %q", tc.o, tc.r, err, tc.want)
		}
	}
	if ReasonsFor("exploded") != nil {
		t.Error("ReasonsFor an unknown outcome returned reasons")
	}
}

func TestOutcomeSentFailed(t *testing.T) {
	for _, o := range Outcomes {
		if o.Sent() != (o != Unsent) {
			t.Errorf("%s.Sent() = %v", o, o.Sent())
		}
		if o.Failed() != (o != OK) {
			t.Errorf("%s.Failed() = %v", o, o.Failed())
		}
	}
}
