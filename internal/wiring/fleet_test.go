package wiring

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/fleet"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

const fleetTargets = `
targets:
  - name: t1
    url: http://127.0.0.1:8000/v1
    model: m
    timeouts: {headers: 5s, first_content: 5s, idle: 5s, total: 5s}
    baseline: {rate: 30, seed: 7}
    budget: {requests_per_day: 1000, tokens_per_day: 10}
    ladder:
      enabled: true
      run_on_start: true
      steps: [30, 150, 240]
      step_duration: 10s
      gap: 2s
`

func loadFleet(t *testing.T, fleetYAML, extra string) (*config.Config, error) {
	t.Helper()
	return Load(config.Options{Path: write(t, "limits: {max_rate: 100}\nfleet: "+fleetYAML+"\n"+fleetTargets+extra), Environ: noEnv})
}

// TestFleetKeys: fleet.shard may be written as a number or auto; what a
// fleet cannot be is refused naming the key, and the rate rule lets a
// fleet of N offer up to N × the per-shard hard maximum.
func TestFleetKeys(t *testing.T) {
	cases := []struct {
		name, fleet, extra string
		want               []string // each in the error; none: valid
	}{
		{"a fleet of three", `{shard: 2, shards: 3, peers: ["http://a:9464", "http://b:9464", "http://c:9464"]}`, "", nil},
		{"auto, DNS peers", `{shard: auto, shards: 3, peers: [llmprobe.default.svc]}`, "", nil},
		{"shard out of range", `{shard: 3, shards: 3, peers: [llmprobe]}`, "", []string{"fleet.shard: shard 3 of 3: want 0 to 2"}},
		{"shard not a number", `{shard: first, shards: 3, peers: [llmprobe]}`, "", []string{"fleet.shard: want a shard index"}},
		{"no shards", `{shards: 0}`, "", []string{"fleet.shards: want 1 to 256"}},
		{"no peers", `{shard: 1, shards: 3}`, "", []string{"fleet.peers: a fleet of 3 needs its peers"}},
		{"bad peer", `{shard: 1, shards: 3, peers: ["http://a:9464/x"]}`, "", []string{"fleet.peers:", "no path"}},
		{"alone, the fleet's steps", `{shards: 1}`, "", []string{"ladder.steps[1]: 150 req/s is above the hard maximum 100"}},
		{"steps above 3 × the cap", `{shard: 0, shards: 2, peers: [llmprobe]}`, "", []string{"ladder.steps[2]: 240 req/s is above 2 shards × the hard maximum 100 per shard"}},
		{"budget below the shard count", `{shard: 0, shards: 16, peers: [llmprobe]}`, "", []string{"budget.tokens_per_day: 10 cannot be split over 16 shards"}},
		{"a schedule longer than a fleet ladder", `{shard: 0, shards: 3, peers: [llmprobe]}`, "      schedule: {every: 1m}\n", nil},
		{"DNS peers over TLS", `{shard: 0, shards: 3, peers: [llmprobe:9464], scheme: https, tls_config: {server_name: llmprobe.default.svc}}`, "", nil},
		{"a scheme that is not one", `{shard: 0, shards: 3, peers: [llmprobe:9464], scheme: ftp}`, "", []string{`fleet.scheme: want http or https, got "ftp"`}},
		{"a user without a password file", `{shard: 0, shards: 3, peers: [llmprobe:9464], basic_auth: {username: prom}}`, "", []string{"fleet.basic_auth: username and password_file go together"}},
		{"a password file that is not there", `{shard: 0, shards: 3, peers: [llmprobe:9464], basic_auth: {username: prom, password_file: /nonexistent/llmprobe-pw}}`, "", []string{"fleet.basic_auth.password_file:", "/nonexistent/llmprobe-pw"}},
		{"a certificate without its key", `{shard: 0, shards: 3, peers: [llmprobe:9464], tls_config: {cert_file: /c.pem}}`, "", []string{"fleet.tls_config: cert_file and key_file go together"}},
		{"a CA file that is not there", `{shard: 0, shards: 3, peers: [llmprobe:9464], tls_config: {ca_file: /nonexistent/llmprobe-ca.pem}}`, "", []string{"fleet.tls_config:", "/nonexistent/llmprobe-ca.pem"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadFleet(t, tc.fleet, tc.extra)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if c.Fleet.Shards > 1 && c.Fleet.Shard == "" {
					t.Fatalf("fleet %+v", c.Fleet)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestFleetLadderChecks: in a fleet, a ladder's gap leaves the coordinator
// time to judge each step, and its schedule is no shorter than a fleet
// ladder's timetable.
func TestFleetLadderChecks(t *testing.T) {
	const f = `{shard: 0, shards: 3, peers: [llmprobe:9464]}`
	body := strings.Replace(fleetTargets, "gap: 2s", "gap: 1s", 1) + "      schedule: {every: 40s}\n"
	_, err := Load(config.Options{Path: write(t, "limits: {max_rate: 100}\nfleet: "+f+"\n"+body), Environ: noEnv})
	if err == nil || !strings.Contains(err.Error(), "ladder.gap: at least 2s in a fleet") ||
		!strings.Contains(err.Error(), "ladder.schedule.every: 40s is shorter than a fleet ladder (50s") {
		t.Fatalf("got %v", err)
	}
}

// TestFleetIdentity: fleet.shard auto takes a StatefulSet pod's ordinal;
// a host name without one is a clear error.
func TestFleetIdentity(t *testing.T) {
	c, err := loadFleet(t, `{shard: auto, shards: 3, peers: [llmprobe]}`, "")
	if err != nil {
		t.Fatal(err)
	}
	c.Admin.Listen = ":9464"
	id, peers, err := Fleet(c, func() (string, error) { return "llmprobe-2", nil })
	if err != nil || id != (fleet.Identity{Shard: 2, Shards: 3}) || peers.DNS != "llmprobe" || peers.Port != 9464 {
		t.Fatalf("got %v %+v %v", id, peers, err)
	}
	if _, _, err := Fleet(c, func() (string, error) { return "probehost", nil }); err == nil || !strings.Contains(err.Error(), "does not end in -ORDINAL") {
		t.Fatalf("a host name without an ordinal: %v", err)
	}
	if _, _, err := Fleet(c, func() (string, error) { return "llmprobe-5", nil }); err == nil || !strings.Contains(err.Error(), "shard 5") {
		t.Fatalf("an ordinal beyond the fleet: %v", err)
	}
	if _, _, err := Fleet(c, func() (string, error) { return "", errors.New("no name") }); err == nil {
		t.Fatal("no host name accepted")
	}
	alone, err := Load(config.Options{Path: write(t, minimal), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if id, _, err := Fleet(alone, nil); err != nil || id != fleet.Alone() {
		t.Fatalf("alone: %v %v", id, err)
	}
}

// TestForShard: each shard offers 1/N of the baseline with its own seeds
// (shard 0 keeps the target's), budgets split into whole shares adding up
// to the budget; a prober alone gets its target unchanged.
func TestForShard(t *testing.T) {
	c, err := loadFleet(t, `{shard: 0, shards: 3, peers: [llmprobe:9464]}`, "")
	if err != nil {
		t.Fatal(err)
	}
	t0 := c.Targets[0]
	seeds := map[int64]bool{}
	var req, tok int64
	for s := range 3 {
		st := ForShard(t0, fleet.Identity{Shard: s, Shards: 3})
		if st.Baseline.Rate != 10 {
			t.Errorf("shard %d: baseline %g, want 10", s, st.Baseline.Rate)
		}
		seeds[st.Baseline.Seed], seeds[st.Ladder.Seed] = true, true
		req += st.Budget.RequestsPerDay
		tok += st.Budget.TokensPerDay
		if s == 0 && (st.Baseline.Seed != 7 || uint64(st.Ladder.Seed) != config.SeedFor("t1", 0)) {
			t.Errorf("shard 0 seeds %d, %d: want the target's own", st.Baseline.Seed, st.Ladder.Seed)
		}
		if len(st.Ladder.Steps) != 3 || st.Ladder.Steps[0] != 30 {
			t.Errorf("shard %d: ladder steps %v: they stay the fleet's", s, st.Ladder.Steps)
		}
	}
	if len(seeds) != 6 || req != 1000 || tok != 10 {
		t.Errorf("%d distinct seeds (want 6), budgets add to %d requests and %d tokens (want 1000, 10)", len(seeds), req, tok)
	}
	if got := ForShard(t0, fleet.Alone()); got.Baseline.Rate != 30 || got.Baseline.Seed != 7 || got.Budget.RequestsPerDay != 1000 {
		t.Errorf("alone: %+v", got.Baseline)
	}
	if config.MaxShards != fleet.MaxShards {
		t.Errorf("config.MaxShards %d ≠ fleet.MaxShards %d", config.MaxShards, fleet.MaxShards)
	}
}

// TestFleetClient: the peers' client sends fleet.basic_auth, with the
// password read from its file on every request (a rotated secret is used
// at once), and trusts the admin servers' certificates through
// fleet.tls_config.ca_file; without the CA the same server is refused.
func TestFleetClient(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _ := testutil.SelfSigned(t, dir, x509.ExtKeyUsageServerAuth)
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%v %s:%s", ok, u, p))
		mu.Unlock()
		if !ok || u != "prom" || p != "first" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()

	pw := filepath.Join(dir, "password")
	if err := os.WriteFile(pw, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	get := func(c *config.Config) (int, error) {
		cli, err := FleetClient(c)
		if err != nil {
			t.Fatal(err)
		}
		defer cli.CloseIdleConnections()
		resp, err := cli.Get(srv.URL + fleet.PathShard)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	c := &config.Config{Fleet: config.Fleet{Shards: 2, BasicAuth: config.PeerBasicAuth{Username: "prom", PasswordFile: pw},
		TLS: config.PeerTLS{CAFile: certFile}}}
	if code, err := get(c); err != nil || code != http.StatusOK {
		t.Fatalf("with the credentials and the CA: %d, %v", code, err)
	}
	if err := os.WriteFile(pw, []byte("rotated"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, err := get(c); err != nil || code != http.StatusUnauthorized {
		t.Fatalf("after the password file changed: %d, %v; want 401 (the new password sent)", code, err)
	}
	mu.Lock()
	if len(seen) != 2 || seen[0] != "true prom:first" || seen[1] != "true prom:rotated" {
		t.Errorf("the server saw %q: want the file's password on each request", seen)
	}
	mu.Unlock()
	noCA := *c
	noCA.Fleet.TLS = config.PeerTLS{}
	if _, err := get(&noCA); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v, want the certificate refused", err)
	}
}
