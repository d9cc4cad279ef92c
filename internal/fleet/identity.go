package fleet

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxShards is the largest fleet.
const MaxShards = 256

// Identity is a prober's place in its fleet: shard Shard (0-based) of
// Shards. Shard 0 is the coordinator. A prober alone is shard 0 of 1.
type Identity struct {
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
}

// Alone is the identity of a prober that is not in a fleet.
func Alone() Identity { return Identity{Shard: 0, Shards: 1} }

// InFleet reports whether there is more than one shard.
func (id Identity) InFleet() bool { return id.Shards > 1 }

// Coordinator reports whether this shard gathers and judges the fleet's
// ladders (shard 0).
func (id Identity) Coordinator() bool { return id.Shard == 0 }

// String is INDEX/COUNT.
func (id Identity) String() string { return fmt.Sprintf("%d/%d", id.Shard, id.Shards) }

// Check reports an identity that cannot be: COUNT outside 1..MaxShards or
// INDEX outside 0..COUNT−1.
func (id Identity) Check() error {
	switch {
	case id.Shards < 1 || id.Shards > MaxShards:
		return fmt.Errorf("shard count %d: want 1 to %d", id.Shards, MaxShards)
	case id.Shard < 0 || id.Shard >= id.Shards:
		return fmt.Errorf("shard %d: want 0 to %d (shards are numbered from 0)", id.Shard, id.Shards-1)
	}
	return nil
}

// ParseShard reads INDEX/COUNT (e.g. "2/3": the third of three shards).
func ParseShard(s string) (Identity, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Identity{}, fmt.Errorf("%q: want INDEX/COUNT, e.g. 2/3", s)
	}
	idx, err1 := strconv.Atoi(i)
	cnt, err2 := strconv.Atoi(n)
	if err := errors.Join(err1, err2); err != nil {
		return Identity{}, fmt.Errorf("%q: want INDEX/COUNT, two whole numbers, e.g. 2/3", s)
	}
	id := Identity{Shard: idx, Shards: cnt}
	if err := id.Check(); err != nil {
		return Identity{}, fmt.Errorf("%q: %w", s, err)
	}
	return id, nil
}

// Ordinal is the shard index in a StatefulSet pod's name: the number after
// its last '-' ("llmprobe-2" → 2; a domain after the first '.' is
// ignored).
func Ordinal(hostname string) (int, error) {
	name, _, _ := strings.Cut(strings.TrimSpace(hostname), ".")
	i := strings.LastIndexByte(name, '-')
	if name == "" || i < 0 || i == len(name)-1 {
		return 0, fmt.Errorf("host name %q does not end in -ORDINAL (a StatefulSet pod name such as llmprobe-2): set the shard index instead (fleet.shard or --shard)", hostname)
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 0 || name[i+1] == '+' {
		return 0, fmt.Errorf("host name %q: %q after the last '-' is not a pod ordinal (a whole number): set the shard index instead (fleet.shard or --shard)", hostname, name[i+1:])
	}
	return n, nil
}

// Rate is this shard's share of a rate: rate / Shards.
func (id Identity) Rate(rate float64) float64 { return rate / float64(max(id.Shards, 1)) }

// Rates is Rate of each rate.
func (id Identity) Rates(rates []float64) []float64 {
	out := make([]float64, len(rates))
	for i, r := range rates {
		out[i] = id.Rate(r)
	}
	return out
}

// Count is this shard's share of a whole-number budget: total / Shards
// rounded down, and one more for each of the first total mod Shards
// shards, so that the shares add up to total exactly (0 stays 0:
// unlimited).
func (id Identity) Count(total int64) int64 {
	n := int64(max(id.Shards, 1))
	share := total / n
	if int64(id.Shard) < total%n {
		share++
	}
	return share
}
