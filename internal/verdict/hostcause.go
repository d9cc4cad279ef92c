package verdict

import "github.com/llmprobe/llmprobe/internal/cause"

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
		if !c.Cause.IsHost() && !(c.Cause == cause.ShardInvalid && c.HostCaused) {
			return false
		}
	}
	return true
}

// HostCaused reports whether v is invalid only because of the prober's
// host (see the function HostCaused).
func (v Validity) HostCaused() bool { return !v.Valid && HostCaused(v.Causes) }
