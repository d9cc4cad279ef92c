package telemetry

import (
	"strconv"
	"sync"
)

// Scopes of the ladder figures (the scope label of the capacity, knee,
// last-run and per-step gauges).
const (
	// ScopeLocal: one prober's ladder (a prober alone: a fleet of one).
	ScopeLocal = "local"
	// ScopeFleet: a fleet's ladder, merged over its shards and judged by
	// its coordinator (shard 0), the only shard that publishes it.
	ScopeFleet = "fleet"
)

// fleetState is the recorder's place in a fleet.
type fleetState struct {
	mu     sync.Mutex
	inited bool
	scope  string
}

// SetFleet records this prober's place in its fleet: llmprobe_fleet_info
// {shard, shards} = 1, and the scope of the ladder figures it publishes
// from now on: "fleet" when shards > 1 (only shard 0 publishes ladder
// figures then), else "local". Call it once, before any ladder figure.
func (r *Recorder) SetFleet(shard, shards int) {
	scope := ScopeLocal
	if shards > 1 {
		scope = ScopeFleet
	}
	r.fleet.mu.Lock()
	r.fleet.scope, r.fleet.inited = scope, true
	r.fleet.mu.Unlock()
	r.prom.fleetInfo.Reset()
	r.prom.fleetInfo.WithLabelValues(strconv.Itoa(shard), strconv.Itoa(shards)).Set(1)
}

// scope is the scope label of the ladder figures (local until SetFleet).
func (r *Recorder) scope() string {
	r.fleet.mu.Lock()
	defer r.fleet.mu.Unlock()
	if !r.fleet.inited {
		return ScopeLocal
	}
	return r.fleet.scope
}
