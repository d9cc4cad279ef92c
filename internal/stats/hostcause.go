package stats

import "slices"

// HostCauses are the causes that blame the prober's host (it lacked CPU,
// was throttled, …), not the generator's configuration nor the target. A
// new host cause is added here, and every caller of HostCaused follows.
var HostCauses = []Cause{CauseHostStarved, CauseCgroupThrottled}

// IsHost reports whether c blames the prober's host (HostCauses).
func (c Cause) IsHost() bool { return slices.Contains(HostCauses, c) }

// HostCaused reports whether causes is not empty and each blames the prober
// host: a host cause, or a fleet shard's invalid share whose own causes all
// were (InvalidCause.HostCaused). Tests that need an on-schedule generator
// accept such a verdict on a busy machine (and skip what needs the
// schedule); so may a script.
func HostCaused(causes []InvalidCause) bool {
	if len(causes) == 0 {
		return false
	}
	for _, c := range causes {
		if !c.Cause.IsHost() && !(c.Cause == CauseShardInvalid && c.HostCaused) {
			return false
		}
	}
	return true
}

// HostCaused reports whether v is invalid only because of the prober's
// host (see the function HostCaused).
func (v Validity) HostCaused() bool { return !v.Valid && HostCaused(v.Causes) }
