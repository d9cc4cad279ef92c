package stats

import (
	"fmt"
	"strings"
)

// Causes of an invalid fleet ladder step: one shard's share is missing or
// its own generator was invalid. They appear in a fleet step's verdict
// (history, status page, reports), never in the live
// llmprobe_generator_invalid_cause gauge (one prober's window).
const (
	// CauseShardMissing: a shard's results for the step did not reach the
	// coordinator in time (down, unreachable, late, or it refused the
	// ladder): the merged figures would be a silent partial figure.
	CauseShardMissing Cause = "shard_missing"
	// CauseShardInvalid: a shard's own generator was invalid for the step
	// (its verdict's causes are in the reason).
	CauseShardInvalid Cause = "shard_invalid"
)

func fleetAction(c Cause) string {
	switch c {
	case CauseShardMissing:
		return "check that every shard is up and reachable from shard 0 on its admin port (fleet.peers), that the shards run the same ladder configuration, and that their clocks agree (the step timetable is wall-clock)"
	case CauseShardInvalid:
		return "see the shard's own causes in the reason and act on that shard (its host, its in-flight cap, its rate)"
	}
	return ""
}

// ShardVerdict is one shard's share of a fleet step as the coordinator
// knows it: Missing says why its results are absent ("" when present);
// Validity is its own generator verdict.
type ShardVerdict struct {
	Shard    int
	Missing  string
	Validity Validity
}

// FleetValidity is the verdict of a fleet step: invalid with
// CauseShardMissing for each shard whose results are missing, and
// CauseShardInvalid for each whose own verdict was invalid (its causes and
// first reason quoted; InvalidCause.HostCaused when they all blame the
// shard's host); when every shard was present and valid, merged, the
// one rule applied to the merged cohort (Merge). Notes of merged are kept.
func FleetValidity(merged Validity, shards []ShardVerdict) Validity {
	v := Validity{Valid: true, Notes: merged.Notes, Host: merged.Host}
	fail := func(c Cause, why string, host bool) {
		v.Valid = false
		v.Causes = append(v.Causes, InvalidCause{Cause: c, Reason: why, Action: c.Action(), HostCaused: host})
	}
	for _, s := range shards {
		switch {
		case s.Missing != "":
			fail(CauseShardMissing, fmt.Sprintf("shard %d: no results: %s", s.Shard, s.Missing), false)
		case !s.Validity.Valid:
			why := fmt.Sprintf("shard %d: generator invalid (%s)", s.Shard, strings.Join(s.Validity.CauseNames(), ", "))
			if len(s.Validity.Causes) > 0 {
				why += ": " + s.Validity.Causes[0].Reason
			}
			fail(CauseShardInvalid, why, s.Validity.HostCaused())
		}
	}
	if v.Valid {
		return merged
	}
	return v
}
