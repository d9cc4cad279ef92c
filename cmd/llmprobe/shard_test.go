package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// TestRunShardFlag: --shard INDEX/COUNT sets fleet.shard and fleet.shards
// over the file's, and the configuration is checked with them: a
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

// TestShardOverridesBeforeValidation: --shard's keys are set before the
// configuration is validated, once: a file written for a fleet of three
// whose daily budget cannot be split three ways runs alone with --shard
// 0/1, and a file that is fine alone is refused with --shard 0/3 naming
// the flag as the source of the shard count.
func TestShardOverridesBeforeValidation(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	target := "targets:\n  - {name: t1, url: \"http://127.0.0.1:8000/v1\", model: m, budget: {requests_per_day: 2}}\n"
	fleetFile := write("fleet.yaml", "fleet: {shard: 0, shards: 3, peers: [\"http://a:9464\"]}\n"+target)
	aloneFile := write("alone.yaml", target)
	load := func(path, flag string) (*config.Config, error) {
		ov, err := shardOverrides(flag)
		if err != nil {
			t.Fatal(err)
		}
		return wiring.Load(config.Options{Path: path, Environ: func() []string { return nil }, Overrides: ov, OverridesFrom: "flag --shard"})
	}
	if _, err := load(fleetFile, ""); err == nil || !strings.Contains(err.Error(), "cannot be split over 3 shards") {
		t.Fatalf("the fleet file alone: %v, want its budget refused for 3 shards", err)
	}
	c, err := load(fleetFile, "0/1")
	if err != nil {
		t.Fatalf("--shard 0/1 over a file for 3 shards: %v", err)
	}
	if c.Fleet.Shard != "0" || c.Fleet.Shards != 1 || c.Source("fleet.shards") != "flag --shard" {
		t.Errorf("fleet %+v from %q, want shard 0 of 1 from the flag", c.Fleet, c.Source("fleet.shards"))
	}
	if _, err := load(aloneFile, "0/3"); err == nil || !strings.Contains(err.Error(), "cannot be split over 3 shards") || !strings.Contains(err.Error(), "fleet.peers") {
		t.Errorf("--shard 0/3 over a file for one prober: %v, want the budget and the missing peers refused", err)
	}
}
