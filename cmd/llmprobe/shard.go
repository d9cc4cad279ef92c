package main

import (
	"strconv"

	"github.com/llmprobe/llmprobe/internal/fleet"
)

// shardHelp is --shard's help text.
const shardHelp = "this prober's place in a fleet, INDEX/COUNT (e.g. 2/3; shard 0 coordinates the fleet's ladders): overrides fleet.shard and fleet.shards"

// shardOverrides reads --shard INDEX/COUNT: the fleet.shard and
// fleet.shards it sets over what the file says, before the configuration
// is validated (rates and budgets are split by the shard count, so they
// are checked with the flag's count, once). "" sets nothing; a malformed
// --shard is a usage error.
func shardOverrides(flag string) (map[string]any, error) {
	if flag == "" {
		return nil, nil
	}
	id, err := fleet.ParseShard(flag)
	if err != nil {
		return nil, badFlag("--shard: %v", err)
	}
	return map[string]any{"fleet.shard": strconv.Itoa(id.Shard), "fleet.shards": id.Shards}, nil
}
