package fleet

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testutil"
)

func TestParsePeers(t *testing.T) {
	tests := []struct {
		in      []string
		port    int
		want    Peers
		wantErr string
	}{
		{[]string{"http://a:9464", "https://b:9464/"}, 0, Peers{URLs: []string{"http://a:9464", "https://b:9464"}}, ""},
		{[]string{"llmprobe.default.svc"}, 9464, Peers{DNS: "llmprobe.default.svc", Port: 9464}, ""},
		{[]string{"llmprobe:9500"}, 9464, Peers{DNS: "llmprobe", Port: 9500}, ""},
		{[]string{"llmprobe"}, 0, Peers{}, "no port"},
		{[]string{"llmprobe:x"}, 0, Peers{}, "port"},
		{[]string{"http://a:9464/metrics"}, 0, Peers{}, "no path"},
		{[]string{"http://user:secret@a:9464"}, 0, Peers{}, "credentials"},
		{[]string{"ftp://a"}, 0, Peers{}, "admin base URL"},
		{[]string{"a", "b"}, 9464, Peers{}, "admin base URL"},
	}
	for _, tt := range tests {
		got, err := ParsePeers(tt.in, tt.port)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParsePeers(%q) = %+v, %v; want an error with %q", tt.in, got, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error echoes a credential: %v", err)
			}
			continue
		}
		if err != nil || got.DNS != tt.want.DNS || got.Port != tt.want.Port || strings.Join(got.URLs, ",") != strings.Join(tt.want.URLs, ",") {
			t.Errorf("ParsePeers(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// fakeShard answers PathShard as info.
func fakeShard(t *testing.T, info ShardInfo) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != PathShard {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(info)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestDiscovery: which address is which shard is asked of each peer; this
// prober's own address is skipped, a shard claimed twice is named as a
// conflict, a silent peer is named, and a DNS name resolves to every
// address on the admin port.
func TestDiscovery(t *testing.T) {
	self := ShardInfo{Identity: Identity{0, 3}, Instance: "self"}
	one := fakeShard(t, ShardInfo{Identity: Identity{1, 3}, Instance: "a"})
	twoA := fakeShard(t, ShardInfo{Identity: Identity{2, 3}, Instance: "b"})
	twoB := fakeShard(t, ShardInfo{Identity: Identity{2, 3}, Instance: "c"})
	me := fakeShard(t, self)
	other := fakeShard(t, ShardInfo{Identity: Identity{1, 5}, Instance: "d"}) // another fleet
	d := &directory{peers: Peers{URLs: []string{me.URL, one.URL, twoA.URL, twoB.URL, other.URL, "http://127.0.0.1:1"}}, self: self,
		client: http.DefaultClient, at: map[int]string{}, conflict: map[int]string{}}
	at, why := d.locate(context.Background(), []int{0, 1, 2})
	if at[1] != one.URL || len(at) != 1 {
		t.Fatalf("located %v (why %v): want shard 1 only", at, why)
	}
	if !strings.Contains(why[2], "claimed by 2 peers") {
		t.Errorf("shard 2: %q, want the conflict named", why[2])
	}
	if !strings.Contains(why[0], "not found") || !strings.Contains(why[0], "127.0.0.1:1") || !strings.Contains(why[0], "answered as shard 1 of 5") {
		t.Errorf("shard 0 (this one): %q, want not found, naming the silent peer and the stranger", why[0])
	}

	_, port, _ := net.SplitHostPort(strings.TrimPrefix(one.URL, "http://"))
	p, _ := strconv.Atoi(port)
	var asked string
	dns := &directory{peers: Peers{DNS: "llmprobe.fleet", Port: p, Lookup: func(_ context.Context, host string) ([]string, error) {
		asked = host
		return []string{"127.0.0.1"}, nil
	}}, self: self, client: http.DefaultClient, at: map[int]string{}, conflict: map[int]string{}}
	at, why = dns.locate(context.Background(), []int{1})
	if asked != "llmprobe.fleet" || at[1] != "http://127.0.0.1:"+port {
		t.Fatalf("DNS: asked %q, located %v (%v)", asked, at, why)
	}
}

// TestDiscoveryDNSOverTLS: DNS peers are spoken to in their Scheme
// (fleet.scheme https: admin servers serving TLS), and a peer that
// refuses this shard's credentials is named with its status.
func TestDiscoveryDNSOverTLS(t *testing.T) {
	self := ShardInfo{Identity: Identity{0, 2}, Instance: "self"}
	info := ShardInfo{Identity: Identity{1, 2}, Instance: "a"}
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "prom" || p != "pw" {
			w.Header().Set("WWW-Authenticate", `Basic realm="llmprobe"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(info)
	}))
	defer s.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.URL, "https://"))
	p, _ := strconv.Atoi(port)
	lookup := func(context.Context, string) ([]string, error) { return []string{"127.0.0.1"}, nil }
	dir := func(c *http.Client) *directory {
		return &directory{peers: Peers{DNS: "llmprobe.fleet", Port: p, Scheme: "https", Lookup: lookup}, self: self,
			client: c, at: map[int]string{}, conflict: map[int]string{}}
	}
	// Without credentials: refused, and the reason says so.
	_, why := dir(s.Client()).locate(context.Background(), []int{1})
	if !strings.Contains(why[1], "https://127.0.0.1:"+port) || !strings.Contains(why[1], "401") {
		t.Errorf("without credentials: %q, want the peer and its 401 named", why[1])
	}
	authed := s.Client()
	authed.Transport = testutil.BasicAuth{User: "prom", Password: "pw", Next: authed.Transport}
	at, why := dir(authed).locate(context.Background(), []int{1})
	if at[1] != "https://127.0.0.1:"+port {
		t.Fatalf("with credentials: located %v (%v), want shard 1 over https", at, why)
	}
}

// TestDiscoverySingleFlight: callers that find a shard unknown at once
// (the coordinator's gather asks for each shard in its own goroutine)
// start one discovery between them, not one each: the others answer from
// what is known while it runs, and the directory is written once. The
// callers are let go together, many times over, since a second discovery
// needs them to meet in a short window.
func TestDiscoverySingleFlight(t *testing.T) {
	self := ShardInfo{Identity: Identity{0, 3}, Instance: "self"}
	one := fakeShard(t, ShardInfo{Identity: Identity{1, 3}, Instance: "a"})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(one.URL, "http://"))
	p, _ := strconv.Atoi(port)
	const rounds, callers = 1000, 16
	for round := range rounds {
		var lookups atomic.Int32
		release := make(chan struct{})
		lookup := func(ctx context.Context, _ string) ([]string, error) {
			lookups.Add(1)
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return []string{"127.0.0.1"}, nil
		}
		t0 := time.Now()
		d := &directory{peers: Peers{DNS: "llmprobe.fleet", Port: p, Lookup: lookup}, self: self, client: http.DefaultClient,
			at: map[int]string{}, conflict: map[int]string{}, now: func() time.Time { return t0 }} // one instant: never stale again
		var returned atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				d.locate(context.Background(), []int{1, 2})
				returned.Add(1)
			}()
		}
		close(start)
		// With one discovery, every caller but the one running it returns
		// while it is held; with one each, the lookups pile up instead.
		deadline := time.Now().Add(10 * time.Second)
		for returned.Load() < callers-1 && lookups.Load() < 2 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		close(release)
		wg.Wait()
		if n := lookups.Load(); n != 1 {
			t.Fatalf("round %d: %d discoveries for %d concurrent callers, want 1", round, n, callers)
		}
		if at, why := d.locate(context.Background(), []int{1}); at[1] != "http://127.0.0.1:"+port {
			t.Fatalf("round %d: after the discovery: located %v (%v), want shard 1", round, at, why)
		}
	}
}

// TestDiscoveryCutShortKeepsDirectory: a discovery its caller's deadline
// cut short learnt nothing of the peers that had no time to answer, so
// the shards already known stay known (an emptied directory would send the
// next gather to discover again, and miss every shard until then).
func TestDiscoveryCutShortKeepsDirectory(t *testing.T) {
	self := ShardInfo{Identity: Identity{0, 3}, Instance: "self"}
	var hang atomic.Bool
	release := make(chan struct{})
	one := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		_ = json.NewEncoder(w).Encode(ShardInfo{Identity: Identity{1, 3}, Instance: "a"})
	}))
	t.Cleanup(one.Close)
	t.Cleanup(func() { close(release) }) // runs first
	d := &directory{peers: Peers{URLs: []string{one.URL}}, self: self, client: http.DefaultClient,
		at: map[int]string{}, conflict: map[int]string{}}
	if at, why := d.locate(context.Background(), []int{1}); at[1] != one.URL {
		t.Fatalf("located %v (%v), want shard 1", at, why)
	}
	hang.Store(true) // shard 1 is slow to answer now
	d.mu.Lock()
	d.last = time.Time{} // the next locate may discover at once
	d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	at, why := d.locate(ctx, []int{1, 2}) // shard 2 unknown: a discovery, cut short by ctx
	if at[1] != one.URL {
		t.Errorf("after a cut-short discovery: located %v (%v), want shard 1 still known", at, why)
	}
	if !strings.Contains(why[2], "cut short") {
		t.Errorf("shard 2: %q, want the cut-short discovery named", why[2])
	}
}
