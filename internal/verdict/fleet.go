package verdict

import (
	"fmt"
	"strings"

	"github.com/llmprobe/llmprobe/internal/cause"
)

// ShardVerdict is one shard's share of a fleet step as the coordinator
// knows it: Missing says why its results are absent ("" when present);
// Validity is its own generator verdict.
type ShardVerdict struct {
	Shard    int
	Missing  string
	Validity Validity
}

// FleetValidity is the verdict of a fleet step: invalid with
// cause.ShardMissing for each shard whose results are missing, and
// cause.ShardInvalid for each whose own verdict was invalid (its causes and
// first reason quoted; InvalidCause.HostCaused when they all blame the
// shard's host); when every shard was present and valid, merged, the
// one rule applied to the merged cohort (Merge). Notes of merged are kept.
func FleetValidity(merged Validity, shards []ShardVerdict) Validity {
	v := Validity{Valid: true, Notes: merged.Notes, Host: merged.Host}
	fail := func(c cause.Cause, why string, host bool) {
		v.Valid = false
		v.Causes = append(v.Causes, InvalidCause{Cause: c, Reason: why, Action: c.Action(), HostCaused: host})
	}
	for _, s := range shards {
		switch {
		case s.Missing != "":
			fail(cause.ShardMissing, fmt.Sprintf("shard %d: no results: %s", s.Shard, s.Missing), false)
		case !s.Validity.Valid:
			why := fmt.Sprintf("shard %d: generator invalid (%s)", s.Shard, strings.Join(s.Validity.CauseNames(), ", "))
			if len(s.Validity.Causes) > 0 {
				why += ": " + s.Validity.Causes[0].Reason
			}
			fail(cause.ShardInvalid, why, s.Validity.HostCaused())
		}
	}
	if v.Valid {
		return merged
	}
	return v
}
