package main

import (
	"strconv"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/fleet"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// shardHelp is --shard's help text.
const shardHelp = "this prober's place in a fleet, INDEX/COUNT (e.g. 2/3; shard 0 coordinates the fleet's ladders): overrides fleet.shard and fleet.shards"

// withShard wraps a configuration loader so that --shard INDEX/COUNT
// (when given) sets fleet.shard and fleet.shards over what the file says;
// the configuration is then checked again with them (rates and budgets
// are split by the shard count). A malformed --shard is a usage error.
func withShard(load func() (*config.Config, error), flag string) (func() (*config.Config, error), error) {
	if flag == "" {
		return load, nil
	}
	id, err := fleet.ParseShard(flag)
	if err != nil {
		return nil, badFlag("--shard: %v", err)
	}
	return func() (*config.Config, error) {
		cfg, err := load()
		if err != nil {
			return nil, err
		}
		cfg.Fleet.Shard, cfg.Fleet.Shards = strconv.Itoa(id.Shard), id.Shards
		if err := cfg.Validate(wiring.Checks()...); err != nil {
			return nil, err
		}
		return cfg, nil
	}, nil
}
