package verdict

import (
	"testing"

	"github.com/llmprobe/llmprobe/internal/cause"
)

// TestHostCaused: a verdict is host-caused when it is invalid and every
// cause blames the prober host, a fleet step's shard_invalid counting as
// one when its shard's own causes all did.
func TestHostCaused(t *testing.T) {
	host := InvalidCause{Cause: cause.HostStarved}
	lag := InvalidCause{Cause: cause.DispatchLag}
	for _, tc := range []struct {
		name string
		v    Validity
		want bool
	}{
		{"valid", Validity{Valid: true}, false},
		{"host starved", Validity{Causes: []InvalidCause{host}}, true},
		{"dispatch lag", Validity{Causes: []InvalidCause{lag}}, false},
		{"host and the in-flight cap", Validity{Causes: []InvalidCause{host, {Cause: cause.InFlightCap}}}, false},
		{"invalid without causes", Validity{}, false},
	} {
		if got := tc.v.HostCaused(); got != tc.want {
			t.Errorf("%s: HostCaused %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, c := range cause.Host {
		if !c.IsHost() || c.Action() == "" {
			t.Errorf("host cause %s: IsHost %v, action %q", c, c.IsHost(), c.Action())
		}
	}
	// A fleet step: a shard invalid for its host makes a host-caused step;
	// one invalid for its lag, or missing, does not.
	merged := Validity{Valid: true}
	for _, tc := range []struct {
		name   string
		shards []ShardVerdict
		want   bool
	}{
		{"a shard's host", []ShardVerdict{{Shard: 0, Validity: Validity{Valid: true}}, {Shard: 1, Validity: Validity{Causes: []InvalidCause{host}}}}, true},
		{"a shard's lag", []ShardVerdict{{Shard: 1, Validity: Validity{Causes: []InvalidCause{lag}}}}, false},
		{"a shard's host and another missing", []ShardVerdict{{Shard: 0, Missing: "down"}, {Shard: 1, Validity: Validity{Causes: []InvalidCause{host}}}}, false},
	} {
		v := FleetValidity(merged, tc.shards)
		if v.Valid || v.HostCaused() != tc.want {
			t.Errorf("%s: valid %v, host-caused %v, want %v (%+v)", tc.name, v.Valid, v.HostCaused(), tc.want, v.Causes)
		}
	}
}
