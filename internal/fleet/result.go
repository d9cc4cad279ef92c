package fleet

import (
	"time"

	"github.com/llmprobe/llmprobe/internal/ladder"
)

// ScopeFleet marks a fleet ladder's result in the history and its figures
// on /metrics (scope="fleet"); a prober alone's are "local".
const ScopeFleet = "fleet"

// Result is a fleet ladder: the ladder.Result judged over the merged steps
// (rates are the fleet's), what each shard contributed to each step, and
// when it was aborted. One JSON line of the history file; readers of
// ladder results see its ladder fields.
type Result struct {
	ladder.Result
	Scope      string      `json:"scope"`
	LadderID   string      `json:"ladder_id"`
	Shards     int         `json:"shards"`
	AbortedAt  *time.Time  `json:"aborted_at,omitempty"`
	ShardSteps []ShardStep `json:"shard_steps"`
}

// ShardStep is one shard's share of one step, as the coordinator merged it.
type ShardStep struct {
	Step          int      `json:"step"`
	Shard         int      `json:"shard"`
	Rate          float64  `json:"rate"`              // the shard's offered rate
	Missing       string   `json:"missing,omitempty"` // why its results are absent
	Planned       int      `json:"planned"`
	Dispatched    int      `json:"dispatched"`
	OK            int      `json:"ok"`
	Good          int      `json:"good"`
	Pending       int      `json:"pending,omitempty"`
	Valid         bool     `json:"valid"`
	InvalidCauses []string `json:"invalid_causes,omitempty"`
	AbortReason   string   `json:"abort_reason,omitempty"`
	// Host is the shard's host health over its share, in words ("host CPU
	// pressure 92%, …"); absent when not measured.
	Host string `json:"host,omitempty"`
}

// Last is the last fleet ladder this shard coordinated (ok false: none).
func (l *Ladder) Last() (Result, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		return Result{}, false
	}
	return *l.last, true
}

// setCurrent marks the ladder whose step this shard is offering now ("":
// none).
func (l *Ladder) setCurrent(id string) {
	l.mu.Lock()
	l.current = id
	l.mu.Unlock()
}
