package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunShardFlag: --shard INDEX/COUNT sets fleet.shard and fleet.shards
// over the file's, and the configuration is checked again with them: a
// malformed --shard is a usage error, and a fleet without peers is refused
// naming the key, before anything starts.
func TestRunShardFlag(t *testing.T) {
	t.Parallel()
	conf := filepath.Join("..", "..", "config", "simulator.yaml")
	for _, tc := range []struct {
		shard, want string
		code        int
	}{
		{"3/3", "--shard: \"3/3\": shard 3: want 0 to 2", exitUsage},
		{"two", "--shard: \"two\": want INDEX/COUNT", exitUsage},
		{"1/3", "fleet.peers: a fleet of 3 needs its peers", -1},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		r := invoke(ctx, "run", "--config", conf, "--listen", closedPort(t), "--shard", tc.shard)
		cancel()
		if r.code == 0 || (tc.code >= 0 && r.code != tc.code) || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("--shard %s: exit %d, stderr %q: want exit %d and %q", tc.shard, r.code, r.stderr, tc.code, tc.want)
		}
	}
}
