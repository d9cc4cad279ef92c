package wiring

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/fleet"
)

// Fleet is this prober's identity and peers: fleet.shard of fleet.shards,
// with fleet.shard "auto" read from the host name (hostname: a StatefulSet
// pod's name, such as llmprobe-2). DNS peers without a port use
// admin.listen's.
func Fleet(c *config.Config, hostname func() (string, error)) (fleet.Identity, fleet.Peers, error) {
	id := fleet.Identity{Shards: max(c.Fleet.Shards, 1)}
	idx, auto, err := c.Fleet.ShardIndex()
	if err != nil {
		return fleet.Identity{}, fleet.Peers{}, fmt.Errorf("%s: fleet.shard: %w", c.Source("fleet.shard"), err)
	}
	id.Shard = idx
	if auto {
		h, err := hostname()
		if err != nil {
			return fleet.Identity{}, fleet.Peers{}, fmt.Errorf("fleet.shard auto: host name: %w", err)
		}
		if id.Shard, err = fleet.Ordinal(h); err != nil {
			return fleet.Identity{}, fleet.Peers{}, fmt.Errorf("fleet.shard auto: %w", err)
		}
	}
	if err := id.Check(); err != nil {
		return fleet.Identity{}, fleet.Peers{}, fmt.Errorf("fleet: %w", err)
	}
	if !id.InFleet() {
		return id, fleet.Peers{}, nil
	}
	peers, err := fleet.ParsePeers(c.Fleet.Peers, adminPort(c.Admin.Listen))
	if err != nil {
		return fleet.Identity{}, fleet.Peers{}, fmt.Errorf("%s: fleet.peers: %w", c.Source("fleet.peers"), err)
	}
	peers.Scheme = c.Fleet.Scheme
	if len(peers.URLs) == 0 && peers.DNS == "" {
		return fleet.Identity{}, fleet.Peers{}, fmt.Errorf("fleet: shard %s has no peers (fleet.peers)", id)
	}
	return id, peers, nil
}

// FleetClient is the HTTP client a shard speaks to its peers with:
// fleet.basic_auth and fleet.tls_config, as a Prometheus scrape's
// (prometheus/common/config: the password file is read on every request,
// the CA and client certificate when they change). It follows no redirect
// (credentials go to the peers named, nowhere else) and speaks HTTP/1.1.
func FleetClient(c *config.Config) (*http.Client, error) {
	f := c.Fleet
	hc := promconfig.HTTPClientConfig{
		TLSConfig: promconfig.TLSConfig{
			CAFile: f.TLS.CAFile, CertFile: f.TLS.CertFile, KeyFile: f.TLS.KeyFile,
			ServerName: f.TLS.ServerName, InsecureSkipVerify: f.TLS.InsecureSkipVerify,
		},
	}
	if f.BasicAuth.Username != "" {
		hc.BasicAuth = &promconfig.BasicAuth{Username: f.BasicAuth.Username, PasswordFile: f.BasicAuth.PasswordFile}
	}
	if err := hc.Validate(); err != nil {
		return nil, fmt.Errorf("fleet peers' client: %w", err)
	}
	if p := f.BasicAuth.PasswordFile; p != "" {
		if _, err := os.ReadFile(p); err != nil {
			return nil, fmt.Errorf("fleet.basic_auth.password_file: %w", err)
		}
	}
	cli, err := promconfig.NewClientFromConfig(hc, "llmprobe_fleet",
		promconfig.WithIdleConnTimeout(30*time.Second), promconfig.WithUserAgent("llmprobe-fleet"))
	if err != nil {
		return nil, fmt.Errorf("fleet.tls_config: %w", err)
	}
	return cli, nil
}

func adminPort(listen string) int {
	_, p, err := net.SplitHostPort(listen)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}

// shardSeedSalt separates a shard's seed derivation from a target name's.
const shardSeedSalt = "llmprobe fleet shard"

// ShardSeed is shard's seed derived from a target's seed (config.SeedFor
// over the seed and the shard index): every shard draws its own arrivals,
// prompts and backoffs, so the shards' streams are independent. Shard 0
// keeps the seed itself (a prober alone is shard 0: nothing changes).
func ShardSeed(seed uint64, shard int) uint64 {
	if shard == 0 {
		return seed
	}
	s := config.SeedFor(fmt.Sprintf("%s %d %d", shardSeedSalt, seed, shard), 0)
	if s == 0 {
		s = 1
	}
	return s
}

// ForShard is target t as shard id offers it: the baseline at
// baseline.rate / shards, the baseline's and the ladder's seeds derived
// for the shard (ShardSeed), and each daily budget split into whole
// shares (fleet.Identity.Count: the first shards take the remainder, and
// the shares add up to the budget). The ladder's rates stay the fleet's:
// the daemon gives its runner 1/shards of each. A prober alone gets t back
// unchanged.
func ForShard(t config.Target, id fleet.Identity) config.Target {
	if !id.InFleet() {
		return t
	}
	t.Baseline.Rate = id.Rate(t.Baseline.Rate)
	t.Baseline.Seed = int64(ShardSeed(Seed(t), id.Shard))
	t.Ladder.Seed = int64(ShardSeed(config.SeedFor(t.Name, t.Ladder.Seed), id.Shard))
	t.Budget.RequestsPerDay = id.Count(t.Budget.RequestsPerDay)
	t.Budget.TokensPerDay = id.Count(t.Budget.TokensPerDay)
	t.Classes = append([]config.Class(nil), t.Classes...)
	t.Ladder.Steps = append([]float64(nil), t.Ladder.Steps...)
	return t
}

// checkFleet checks what a fleet asks: peers that parse, ladders whose gap
// leaves the coordinator time to judge each step (fleet.MinGap), and
// schedules no shorter than a fleet ladder (ladder.Timetable.FleetSpan:
// its first step fleet.AnnounceLead after it is announced, each step
// step_duration + timeouts.total + gap on the timetable).
func checkFleet(c *config.Config, add func(key, format string, args ...any)) {
	if c.Fleet.Shards <= 1 {
		return
	}
	if len(c.Fleet.Peers) > 0 {
		if _, err := fleet.ParsePeers(c.Fleet.Peers, adminPort(c.Admin.Listen)); err != nil {
			add("fleet.peers", "%v", err)
		}
	}
	if _, err := FleetClient(c); err != nil {
		add("fleet", "%v", err)
	}
	for i, t := range c.Targets {
		if !t.Ladder.Enabled {
			continue
		}
		p := fmt.Sprintf("targets[%d].ladder", i)
		if t.Ladder.Gap.D() < fleet.MinGap {
			add(p+".gap", "at least %s in a fleet (the coordinator gathers and judges each step before the next), got %s", fleet.MinGap, t.Ladder.Gap)
		}
		if every, span := t.Ladder.Schedule.Every.D(), t.Ladder.Timetable(t.Timeouts.Total).FleetSpan(fleet.AnnounceLead); every > 0 && every < span {
			add(p+".schedule.every", "%s is shorter than a fleet ladder (%s: each step, timeouts.total and gap, on the fleet's timetable)", every, span)
		}
	}
}
