package fleet

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
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
