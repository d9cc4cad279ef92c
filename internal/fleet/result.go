package fleet

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladder"
)

// ScopeFleet marks a fleet ladder's result in the history and its figures
// on /metrics (scope="fleet"); a prober alone's are "local".
const ScopeFleet = "fleet"

// Result is a fleet ladder: the ladder result (the one model,
// ladderresult.LadderResult) judged over the merged steps (rates are the
// fleet's), and the fleet's own part: what each shard contributed to each
// step, and when it was aborted. One JSON line of the history file: the
// ladder result's schema with the fleet's fields beside them, so readers
// of ladder results read it as one.
type Result struct {
	ladder.Result
	Fleet
}

// Fleet is a fleet ladder's own part of its result.
type Fleet struct {
	Scope      string      `json:"scope"`
	LadderID   string      `json:"ladder_id"`
	Shards     int         `json:"shards"`
	AbortedAt  *time.Time  `json:"aborted_at,omitempty"`
	ShardSteps []ShardStep `json:"shard_steps"`
}

// MarshalJSON writes the ladder result's object with the fleet's fields
// added (the embedded result's own MarshalJSON would drop them).
func (r Result) MarshalJSON() ([]byte, error) {
	lr, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	fl, err := json.Marshal(r.Fleet)
	if err != nil {
		return nil, fmt.Errorf("fleet result: %w", err)
	}
	// both are objects: {…ladder…} + {…fleet…} → {…ladder…,…fleet…}
	return append(append(lr[:len(lr)-1:len(lr)-1], ','), fl[1:]...), nil
}

// UnmarshalJSON reads both parts from the one object.
func (r *Result) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &r.Result); err != nil {
		return err
	}
	if err := json.Unmarshal(b, &r.Fleet); err != nil {
		return fmt.Errorf("fleet result: %w", err)
	}
	return nil
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
