package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// Peers is where a shard finds the others: admin base URLs
// (http://llmprobe-0.llmprobe:9464), or one DNS name (a Kubernetes headless
// Service) whose every address is a shard's admin server on Port, spoken
// in Scheme. Which address is which shard is asked of each (PathShard).
type Peers struct {
	URLs []string
	DNS  string
	Port int
	// Scheme is the DNS peers' scheme, "http" or "https"; "" is "http".
	Scheme string
	// Lookup resolves DNS; nil is net.DefaultResolver.LookupHost.
	Lookup func(ctx context.Context, host string) ([]string, error)
}

// ParsePeers reads fleet.peers: URLs (http or https, host and port, no
// path, query or credentials), or a single entry without a scheme, a DNS
// name (optionally NAME:PORT) resolved to every shard; port is the admin
// port used when it names none.
func ParsePeers(list []string, port int) (Peers, error) {
	if len(list) == 1 && !strings.Contains(list[0], "://") {
		host, p := list[0], port
		if h, ps, err := net.SplitHostPort(host); err == nil {
			n, err := strconv.Atoi(ps)
			if err != nil || n < 1 || n > 65535 {
				return Peers{}, fmt.Errorf("%q: port %q: want 1 to 65535", list[0], ps)
			}
			host, p = h, n
		}
		if host == "" || strings.ContainsAny(host, "/?#@ ") {
			return Peers{}, fmt.Errorf("%q: want a DNS name (a headless Service) or admin base URLs", list[0])
		}
		if p < 1 || p > 65535 {
			return Peers{}, fmt.Errorf("%q: no port: give NAME:PORT or an admin.listen with a port", list[0])
		}
		return Peers{DNS: host, Port: p}, nil
	}
	var out Peers
	for _, s := range list {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return Peers{}, fmt.Errorf("%q: want an admin base URL such as http://llmprobe-1.llmprobe:9464 (no path, query or credentials), or one DNS name", sanitize.URL(s))
		}
		out.URLs = append(out.URLs, u.Scheme+"://"+u.Host)
	}
	return out, nil
}

// addresses lists the peers' base URLs now (resolving the DNS name).
func (p Peers) addresses(ctx context.Context) ([]string, error) {
	if p.DNS == "" {
		return p.URLs, nil
	}
	lookup := p.Lookup
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	hosts, err := lookup(ctx, p.DNS)
	if err != nil {
		return nil, fmt.Errorf("fleet peers: resolve %s: %w", p.DNS, err)
	}
	scheme := p.Scheme
	if scheme == "" {
		scheme = "http"
	}
	out := make([]string, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, scheme+"://"+net.JoinHostPort(h, strconv.Itoa(p.Port)))
	}
	return out, nil
}

// directory knows which base URL is which shard.
type directory struct {
	peers    Peers
	self     ShardInfo
	client   *http.Client
	mu       sync.Mutex
	at       map[int]string // shard → base URL
	conflict map[int]string // shard → why it cannot be told (two processes claim it)
	silent   string         // the peers that did not answer the last discovery, and why
	last     time.Time      // when the last discovery began
	now      func() time.Time
}

// locate returns the base URL of each shard asked for that it knows,
// discovering the peers again when one is unknown (at most once per
// PollEvery, and one discovery at a time: the caller that starts one marks
// it begun under the lock, and concurrent callers answer from what is
// known). It never returns this shard.
func (d *directory) locate(ctx context.Context, want []int) (map[int]string, map[int]string) {
	d.mu.Lock()
	missing := false
	for _, s := range want {
		if _, ok := d.at[s]; !ok {
			missing = true
		}
	}
	now := time.Now
	if d.now != nil {
		now = d.now
	}
	discover := missing && now().Sub(d.last) >= PollEvery
	if discover {
		d.last = now()
	}
	d.mu.Unlock()
	if discover {
		d.discover(ctx)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	out, why := map[int]string{}, map[int]string{}
	for _, s := range want {
		if u, ok := d.at[s]; ok {
			out[s] = u
		} else if c, ok := d.conflict[s]; ok {
			why[s] = c
		} else {
			why[s] = "not found among the peers (fleet.peers)" + d.silent
		}
	}
	return out, why
}

// forget drops a shard's address (it stopped answering as that shard).
func (d *directory) forget(shard int) {
	d.mu.Lock()
	delete(d.at, shard)
	d.mu.Unlock()
}

// discover asks every peer which shard it is (locate starts it).
func (d *directory) discover(ctx context.Context) {
	addrs, err := d.peers.addresses(ctx)
	if err != nil {
		d.mu.Lock()
		d.silent = ": " + err.Error()
		d.mu.Unlock()
		return
	}
	type answer struct {
		url  string
		info ShardInfo
		err  error
	}
	answers := make([]answer, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		wg.Go(func() {
			var info ShardInfo
			err := getJSON(ctx, d.client, a+PathShard, time.Second, 1<<16, &info)
			answers[i] = answer{a, info, err}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		// Cut short (the caller's deadline): the silent peers may only
		// have run out of time, so what was known is kept.
		d.mu.Lock()
		d.silent = "; the last discovery was cut short: " + err.Error()
		d.mu.Unlock()
		return
	}
	at, claims := map[int]string{}, map[int][]string{}
	var silent []string
	for _, a := range answers {
		switch {
		case a.err != nil:
			silent = append(silent, peerError(a.url, a.err))
			continue
		case a.info.Instance == d.self.Instance:
			continue
		case a.info.Check() != nil || a.info.Shards != d.self.Shards:
			silent = append(silent, fmt.Sprintf("%s answered as shard %d of %d", a.url, a.info.Shard, a.info.Shards))
			continue
		}
		claims[a.info.Shard] = append(claims[a.info.Shard], a.url)
		at[a.info.Shard] = a.url
	}
	conflict := map[int]string{}
	for s, urls := range claims {
		if len(urls) > 1 {
			delete(at, s)
			conflict[s] = fmt.Sprintf("claimed by %d peers (%s): two probers run as one shard", len(urls), strings.Join(urls, ", "))
		}
	}
	d.mu.Lock()
	d.at, d.conflict, d.silent = at, conflict, ""
	if len(silent) > 0 {
		d.silent = sanitize.String("; not answering as a shard of this fleet: "+strings.Join(silent, "; "), 600)
	}
	d.mu.Unlock()
}

// errStatus is a non-200 answer, with the peer's error text (cleaned).
type errStatus struct {
	code int
	msg  string
}

func (e errStatus) Error() string { return fmt.Sprintf("HTTP %d: %s", e.code, e.msg) }

// getJSON GETs u within timeout and decodes at most limit bytes of JSON
// into v. A non-200 answer is an errStatus with its (cleaned) error text.
func getJSON(ctx context.Context, c *http.Client, u string, timeout time.Duration, limit int64, v any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", sanitize.URL(u), unwrapURL(err))
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, limit+1)
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		b, _ := io.ReadAll(io.LimitReader(body, 4096))
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = http.StatusText(resp.StatusCode)
		}
		return errStatus{resp.StatusCode, sanitize.String(e.Error, 300)}
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return fmt.Errorf("GET %s: read: %w", sanitize.URL(u), err)
	}
	if int64(len(b)) > limit {
		return fmt.Errorf("GET %s: answer larger than %d bytes", sanitize.URL(u), limit)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("GET %s: %w", sanitize.URL(u), err)
	}
	return nil
}

// peerError is why the peer at base did not say which shard it is, naming
// it (a status answer does not), and what to set when it asked for
// credentials.
func peerError(base string, err error) string {
	var st errStatus
	if !errors.As(err, &st) {
		return err.Error()
	}
	msg := fmt.Sprintf("GET %s: %v", sanitize.URL(base+PathShard), err)
	if st.code == http.StatusUnauthorized || st.code == http.StatusForbidden {
		msg += " (its admin server asks for credentials: fleet.basic_auth, fleet.tls_config)"
	}
	return msg
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
