package config

import (
	"fmt"
	"regexp"
	"strconv"
)

// MaxShards is the largest fleet.shards (fleet.MaxShards; a wiring test
// holds the two equal).
const MaxShards = 256

// ShardAuto is the fleet.shard that takes the shard index from the host
// name (a StatefulSet pod's ordinal: llmprobe-2 is shard 2).
const ShardAuto = "auto"

// Fleet is this prober's place among several that split every target's
// baseline and ladders between them (docs/fleet.md). A prober alone is
// shard 0 of 1, and nothing of it changes. Read at start: a reload keeps
// the fleet the daemon started with.
type Fleet struct {
	// Shard is this prober's index, 0 to shards−1 (shard 0 coordinates
	// the fleet's ladders), or "auto": the ordinal ending the host name
	// (HOSTNAME) of a StatefulSet pod. A number may be written unquoted.
	Shard string `koanf:"shard" json:"shard"`
	// Shards is how many probers share the load.
	Shards int `koanf:"shards" json:"shards"`
	// Peers are the other probers' admin base URLs (this one's may be
	// listed too), or one DNS name (a headless Service, NAME or
	// NAME:PORT) that resolves to every prober's address; its port is
	// admin.listen's when it names none.
	Peers []string `koanf:"peers" json:"peers,omitempty"`
	// Scheme is how DNS peers are spoken to: "http" (the default) or
	// "https" (admin servers serving TLS). Peer URLs carry their own.
	Scheme string `koanf:"scheme" json:"scheme,omitempty"`
	// BasicAuth is what this prober sends its peers when their admin
	// servers require basic auth (admin.web_config_file's basic_auth_users).
	BasicAuth PeerBasicAuth `koanf:"basic_auth" json:"basic_auth"`
	// TLS is how this prober checks its peers' certificates (and presents
	// its own, when their web configuration asks for client certificates).
	TLS PeerTLS `koanf:"tls_config" json:"tls_config"`
}

// PeerBasicAuth is a user and the file holding its password (read on
// every request, so a rotated secret is picked up; never the password
// itself in the configuration).
type PeerBasicAuth struct {
	Username     string `koanf:"username" json:"username,omitempty"`           // the user this prober sends its peers' admin servers (a name in their web configuration's basic_auth_users); with password_file
	PasswordFile string `koanf:"password_file" json:"password_file,omitempty"` // file holding that user's password (a mounted Secret), read on every request; trailing newline ignored
}

// PeerTLS is the client side of TLS to the peers' admin servers, as in a
// Prometheus scrape's tls_config.
type PeerTLS struct {
	CAFile             string `koanf:"ca_file" json:"ca_file,omitempty"`                           // PEM file of the CA that signed the peers' admin certificates ("" = the system's)
	CertFile           string `koanf:"cert_file" json:"cert_file,omitempty"`                       // client certificate shown to peers whose web configuration asks for one; with key_file
	KeyFile            string `koanf:"key_file" json:"key_file,omitempty"`                         // its private key
	ServerName         string `koanf:"server_name" json:"server_name,omitempty"`                   // name checked on the peers' certificates instead of the address (DNS peers resolve to pod IPs: give the name the certificate holds)
	InsecureSkipVerify bool   `koanf:"insecure_skip_verify" json:"insecure_skip_verify,omitempty"` // do not check the peers' certificates (tests only: anyone on the path can then read the fleet's results)
}

var shardIndex = regexp.MustCompile(`^[0-9]{1,4}$`)

// ShardIndex reads fleet.shard: its index, or auto (the index is then the
// host name's ordinal).
func (f Fleet) ShardIndex() (index int, auto bool, err error) {
	switch {
	case f.Shard == ShardAuto:
		return 0, true, nil
	case f.Shard == "":
		return 0, false, nil
	case shardIndex.MatchString(f.Shard):
		n, _ := strconv.Atoi(f.Shard)
		return n, false, nil
	}
	return 0, false, fmt.Errorf("want a shard index (0 to fleet.shards−1) or %q, got %q", ShardAuto, f.Shard)
}

// normalizeFleet lets fleet.shard be written as a number (YAML `shard: 2`):
// it is a string key, since it may also be "auto".
func normalizeFleet(raw map[string]any) {
	f, ok := raw["fleet"].(map[string]any)
	if !ok {
		return
	}
	switch v := f["shard"].(type) {
	case int:
		f["shard"] = strconv.Itoa(v)
	case int64:
		f["shard"] = strconv.FormatInt(v, 10)
	case uint64:
		f["shard"] = strconv.FormatUint(v, 10)
	case float64:
		if v == float64(int64(v)) {
			f["shard"] = strconv.FormatInt(int64(v), 10)
		}
	}
}

// shards is the fleet's size as the rate and budget rules see it (at
// least 1).
func (c *Config) shards() int { return max(c.Fleet.Shards, 1) }

// validateFleet checks the fleet keys, and what a fleet asks of the
// targets: a daily budget splits into whole shares (at least one request
// or token per shard).
func (c *Config) validateFleet(el *errorList) {
	f := c.Fleet
	if f.Shards < 1 || f.Shards > MaxShards {
		el.add("fleet.shards", "want 1 to %d, got %d", MaxShards, f.Shards)
		return
	}
	idx, auto, err := f.ShardIndex()
	switch {
	case err != nil:
		el.add("fleet.shard", "%v", err)
	case !auto && idx >= f.Shards:
		el.add("fleet.shard", "shard %d of %d: want 0 to %d (shards are numbered from 0)", idx, f.Shards, f.Shards-1)
	}
	switch f.Scheme {
	case "", "http", "https":
	default:
		el.add("fleet.scheme", "want http or https, got %q", f.Scheme)
	}
	if a := f.BasicAuth; (a.Username == "") != (a.PasswordFile == "") {
		el.add("fleet.basic_auth", "username and password_file go together (got username %q, password_file %q)", a.Username, a.PasswordFile)
	}
	if t := f.TLS; (t.CertFile == "") != (t.KeyFile == "") {
		el.add("fleet.tls_config", "cert_file and key_file go together (got cert_file %q, key_file %q)", t.CertFile, t.KeyFile)
	}
	if f.Shards > 1 && len(f.Peers) == 0 {
		el.add("fleet.peers", "a fleet of %d needs its peers: admin base URLs, or one DNS name resolving to every prober", f.Shards)
	}
	if f.Shards == 1 {
		return
	}
	for i, t := range c.Targets {
		p := fmt.Sprintf("targets[%d].budget", i)
		if n := t.Budget.RequestsPerDay; n > 0 && n < int64(f.Shards) {
			el.add(p+".requests_per_day", "%d cannot be split over %d shards (each gets a whole share, at least 1)", n, f.Shards)
		}
		if n := t.Budget.TokensPerDay; n > 0 && n < int64(f.Shards) {
			el.add(p+".tokens_per_day", "%d cannot be split over %d shards (each gets a whole share, at least 1)", n, f.Shards)
		}
	}
}
