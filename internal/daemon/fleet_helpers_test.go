package daemon

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/fleet"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/telemetry"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// testFleet is N in-process daemons on loopback, shards 0..N−1 of one
// fleet with static peers (each other's admin URLs).
type testFleet struct {
	t      *testing.T
	addrs  []string // host:port of each shard's admin server
	shards []*running
	sinks  []*recSink
	yaml   func(shard int) string
	client func() *http.Client // nil: plain HTTP; else HTTPS with this client
}

// fleetYAML is a whole configuration for shard of a fleet whose admin
// servers are at addrs, with targets appended.
func fleetYAML(shard int, addrs []string, global, targets string) string {
	peers := make([]string, len(addrs))
	for i, a := range addrs {
		peers[i] = `"http://` + a + `"`
	}
	return fmt.Sprintf("admin: {listen: \"127.0.0.1:0\"}\ndrain: {timeout: 2s}\n%s\nfleet: {shard: %d, shards: %d, peers: [%s]}\ntargets:%s",
		global, shard, len(addrs), strings.Join(peers, ", "), targets)
}

// loadChecked is loadConfig with the domain's checks (wiring.Load's).
func loadChecked(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.LoadWith(config.Options{BuiltIn: []byte(yaml), Environ: func() []string { return nil }, Checks: wiring.Checks()})
	if err != nil {
		t.Fatalf("config: %v\n%s", err, yaml)
	}
	return cfg
}

// startTestFleet starts n shards; yaml(shard, addrs) is each one's
// configuration.
func startTestFleet(t *testing.T, n int, yaml func(shard int, addrs []string) string) *testFleet {
	t.Helper()
	return startTestFleetClient(t, n, yaml, nil)
}

// startTestFleetClient is startTestFleet whose tests speak to the shards'
// admin servers with client (nil: plain HTTP).
func startTestFleetClient(t *testing.T, n int, yaml func(shard int, addrs []string) string, client func() *http.Client) *testFleet {
	t.Helper()
	f := &testFleet{t: t, shards: make([]*running, n), sinks: make([]*recSink, n), client: client}
	ls := make([]net.Listener, n)
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls[i] = l
		f.addrs = append(f.addrs, l.Addr().String())
	}
	f.yaml = func(shard int) string { return yaml(shard, f.addrs) }
	for i := range n {
		f.start(i, ls[i])
	}
	return f
}

// start runs shard i on listener l (a new one on its address when nil).
func (f *testFleet) start(i int, l net.Listener) {
	t := f.t
	t.Helper()
	if l == nil {
		var err error
		for range 50 { // the address was just freed
			if l, err = net.Listen("tcp", f.addrs[i]); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	rec, err := telemetry.New(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sink := &recSink{}
	cfg := loadChecked(t, f.yaml(i))
	source := configSource(cfg)
	d, err := New(Options{Config: cfg, Recorder: rec, Listener: l, Tick: 50 * time.Millisecond,
		IdentityEvery: 100 * time.Millisecond, Sinks: []ledger.Sink{sink}, Load: source.load})
	if err != nil {
		_ = l.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{d: d, rec: rec, admin: "http://" + f.addrs[i], source: source.cfg, cancel: cancel, errc: make(chan error, 1),
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	if f.client != nil {
		r.admin, r.client = "https://"+f.addrs[i], f.client()
	}
	go func() { r.errc <- d.Run(ctx) }()
	t.Cleanup(func() { _ = r.stop(t) })
	f.shards[i], f.sinks[i] = r, sink
	waitFor(t, 5*time.Second, "shard admin ready", func() bool {
		resp, err := r.client.Get(r.admin + fleet.PathShard)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// wall is the wall-clock instant of ledger offset off on shard i.
func (f *testFleet) wall(i int, off time.Duration) time.Time { return f.shards[i].d.start.Add(off) }

// lastFleet is shard 0's last fleet ladder of target (ok false: none yet).
func (f *testFleet) lastFleet(target string) (fleet.Result, bool) {
	d := f.shards[0].d
	d.mu.Lock()
	r := d.targets[target]
	d.mu.Unlock()
	if r == nil || r.fleet == nil {
		return fleet.Result{}, false
	}
	return r.fleet.Last()
}

// waitFleetLadder waits for shard 0's next fleet ladder of target after
// since (its start) and returns it.
func (f *testFleet) waitFleetLadder(target string, since time.Time, timeout time.Duration) fleet.Result {
	f.t.Helper()
	var res fleet.Result
	waitFor(f.t, timeout, "a fleet ladder to finish", func() bool {
		var ok bool
		res, ok = f.lastFleet(target)
		return ok && res.Started.After(since)
	})
	return res
}

// startFleetSim starts a simulator of 4 slots of 0.05 + 16 × 0.01 = 0.21 s of
// service each (about 19 req/s), as mod changes it; it returns its base URL.
func startFleetSim(t *testing.T, mod func(*sim.Config)) (*sim.Server, string) {
	t.Helper()
	c := sim.DefaultConfig()
	c.Slots, c.AdmissionLimit = 4, 256
	c.TTFT, c.TokenTime, c.OutputTokens = sim.FixedDist(0.05), sim.FixedDist(0.01), sim.FixedDist(16)
	if mod != nil {
		mod(&c)
	}
	s, err := sim.New(c)
	if err != nil {
		t.Fatal(err)
	}
	u, stop, err := s.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	return s, u
}

// loadConfigErr loads yaml with the domain's checks and returns the error.
func loadConfigErr(yaml string) (*config.Config, error) {
	return config.LoadWith(config.Options{BuiltIn: []byte(yaml), Environ: func() []string { return nil }, Checks: wiring.Checks()})
}
