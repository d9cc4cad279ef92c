package chaos

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// The long-running daemon: two targets, "control" (always healthy) and
// "chaos" (driven through every hostile behaviour in turn).
const (
	controlRate = 4.0 // req/s, constant arrivals
	chaosRate   = 5.0 // req/s, constant arrivals
	// Targets are staggered by 137 ms × their index (control 0, chaos 1).
	stagger = 137 * time.Millisecond
	// settle is left out of each end of a phase when records are judged by
	// the phase they were planned in (a late dispatch reaches the next
	// behaviour).
	settle = 150 * time.Millisecond
	// perPhase is how many requests of each outcome a phase requires before
	// the next one starts.
	perPhase = 2
)

// tlsSwitch is the HTTPS (HTTP/2) target of the TLS phases: it serves a
// trusted or an untrusted certificate, a healthy stream or a stream reset.
type tlsSwitch struct {
	url, caFile        string
	trusted, untrusted tls.Certificate
	useUntrusted       atomic.Bool
	rst                atomic.Bool
	h2, h1             atomic.Int64
	mu                 sync.Mutex
	conns              map[net.Conn]struct{}
}

func newTLSSwitch(t *testing.T, dir string) *tlsSwitch {
	load := func(sub string) (tls.Certificate, string) {
		d := filepath.Join(dir, sub)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		certPath, keyPath, _ := testutil.SelfSigned(t, d, x509.ExtKeyUsageServerAuth)
		c, err := tls.LoadX509KeyPair(certPath, keyPath)
		if err != nil {
			t.Fatal(err)
		}
		return c, certPath
	}
	s := &tlsSwitch{conns: map[net.Conn]struct{}{}}
	s.trusted, s.caFile = load("trusted")
	s.untrusted, _ = load("untrusted")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.url = "https://" + ln.Addr().String() + "/v1"
	srv := &http.Server{
		Handler:  http.HandlerFunc(s.serve),
		ErrorLog: log.New(io.Discard, "", 0),
		TLSConfig: &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if s.useUntrusted.Load() {
				return &s.untrusted, nil
			}
			return &s.trusted, nil
		}},
		ConnState: func(c net.Conn, st http.ConnState) {
			s.mu.Lock()
			defer s.mu.Unlock()
			switch st {
			case http.StateNew:
				s.conns[c] = struct{}{}
			case http.StateClosed, http.StateHijacked:
				delete(s.conns, c)
			}
		},
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// closeConns closes every connection, so that the next request makes a new
// one (and meets the new certificate).
func (s *tlsSwitch) closeConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		_ = c.Close()
	}
}

func (s *tlsSwitch) serve(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 2 {
		s.h2.Add(1)
	} else {
		s.h1.Add(1)
	}
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Build", "build-tls")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"chaos-model","root":"tls"}]}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	for range 2 {
		_, _ = io.WriteString(w, "data: "+chatChunk("c", "chaos-model", `{"content":"word "}`, "null")+"\n\n")
		w.(http.Flusher).Flush()
		time.Sleep(2 * time.Millisecond)
	}
	if s.rst.Load() {
		panic(http.ErrAbortHandler) // HTTP/2: RST_STREAM
	}
	_, _ = io.WriteString(w, "data: "+chatChunk("c", "chaos-model", `{}`, `"stop"`)+"\n\n")
	_, _ = io.WriteString(w, `data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2}}`+"\n\ndata: [DONE]\n\n")
}

// phaseRun is the long-running daemon and its bookkeeping.
type phaseRun struct {
	t        *testing.T
	p        *proc
	admin    string
	cfgPath  string
	ledger   string
	chaos    *hostile
	control  *hostile
	tls      *tlsSwitch
	scrapes  int
	prev     map[string]float64
	reloads  int // accepted reloads
	refusals int // refused reloads
	// swaps are the accepted reloads, each from the signal to the log line
	// that said it was done: the streams were swapped somewhere inside.
	swaps  []swapSpan
	phases []phaseSpan
	// slow are the spans (reloads included) when the chaos target ran at a
	// case's own rate.
	slow []rateSpan
}

// swapSpan is when one accepted reload swapped the streams: after signal
// and before done.
type swapSpan struct{ signal, done time.Time }

// rateSpan is when the chaos target ran at another rate.
type rateSpan struct {
	start, end time.Time
	rate       float64
}

// phaseSpan is when a phase ran and what its requests may end with.
type phaseSpan struct {
	name       string
	want       []want
	start, end time.Time
}

// chaosTarget is the chaos target's current shape in the configuration.
type chaosTarget struct {
	url, api, caFile string
	to               timeouts
	rate             float64 // 0 = chaosRate
	enabled          bool
	budget           int    // daily tokens, 0 = none
	extra, global    string // a case's extra target and top-level YAML
}

func (pr *phaseRun) config(ct chaosTarget, controlOn bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "admin: {listen: %q}\n", pr.admin)
	b.WriteString("log: {level: info, format: json}\n")
	fmt.Fprintf(&b, "ledger: {dir: %q}\n", pr.ledger)
	fmt.Fprintf(&b, "drain: {timeout: %s}\n", drainTimeout)
	if ct.global != "" {
		b.WriteString(ct.global + "\n")
	}
	b.WriteString("targets:\n")
	b.WriteString(targetYAML("control", pr.control.url(), "openai-chat", "", timeouts{connect: 2 * time.Second, headers: 10 * time.Second,
		firstContent: 10 * time.Second, idle: 10 * time.Second, total: 20 * time.Second}, controlRate, controlOn, 0, ""))
	rate := ct.rate
	if rate == 0 {
		rate = chaosRate
	}
	b.WriteString(targetYAML("chaos", ct.url, ct.api, ct.caFile, ct.to, rate, ct.enabled, ct.budget, ct.extra))
	return b.String()
}

func (pr *phaseRun) write(s string) {
	if err := os.WriteFile(pr.cfgPath, []byte(s), 0o600); err != nil {
		pr.t.Fatal(err)
	}
}

// count counts log lines whose msg contains s.
func (pr *phaseRun) count(s string) int {
	return bytes.Count(pr.p.stderr.Bytes(), []byte(s))
}

// refusedCount counts the log lines of refused reloads (a file that does
// not load, or a configuration whose targets cannot be built).
func (pr *phaseRun) refusedCount() int {
	return pr.count(`"SIGHUP: config refused`) + pr.count(`"reload refused`)
}

// hup sends SIGHUP and waits for the daemon to log the reload's fate:
// accepted (want true) or refused.
func (pr *phaseRun) hup(accept bool) {
	pr.t.Helper()
	okBefore, refusedBefore := pr.count(`"configuration reloaded"`), pr.refusedCount()
	signal := time.Now()
	_ = pr.p.cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		ok, refused := pr.count(`"configuration reloaded"`) > okBefore, pr.refusedCount() > refusedBefore
		switch {
		case ok && accept:
			pr.reloads++
			pr.swaps = append(pr.swaps, swapSpan{signal: signal, done: time.Now()})
			return
		case refused && !accept:
			pr.refusals++
			return
		case ok || refused:
			pr.t.Fatalf("SIGHUP: reload accepted %t, refused %t; want accepted %t; stderr:\n%s", ok, refused, accept, tail(pr.p.stderr.Bytes(), 3000))
		}
		pr.alive("SIGHUP")
		time.Sleep(20 * time.Millisecond)
	}
	pr.t.Fatalf("SIGHUP: no reload logged within 10s (want accepted %t)", accept)
}

// reload writes a configuration and has the daemon load it.
func (pr *phaseRun) reload(ct chaosTarget, controlOn bool) {
	pr.t.Helper()
	pr.write(pr.config(ct, controlOn))
	pr.hup(true)
}

// alive fails the test at once when the daemon died.
func (pr *phaseRun) alive(during string) {
	pr.t.Helper()
	if pr.p.exited() {
		pr.t.Fatalf("llmprobe run died during %s (exit code %d); stderr:\n%s", during, pr.p.exitCode(), tail(pr.p.stderr.Bytes(), 6000))
	}
}

// scrape reads /metrics, checks it is ready, that its labels are clean and
// that no counter went down or vanished since the last scrape.
func (pr *phaseRun) scrape(during string) scrape {
	pr.t.Helper()
	pr.alive(during)
	s, err := scrapeMetrics(pr.admin)
	if err != nil {
		pr.alive(during)
		pr.t.Fatalf("%s: %v", during, err)
	}
	pr.scrapes++
	cur := s.counters()
	for k, v := range pr.prev {
		nv, ok := cur[k]
		switch {
		case !ok:
			pr.t.Errorf("%s: the series %s vanished from /metrics (was %v)", during, k, v)
		case nv < v:
			pr.t.Errorf("%s: the counter %s went down: %v → %v", during, k, v, nv)
		}
	}
	pr.prev = cur
	return s
}

func (pr *phaseRun) ready(during string) {
	pr.t.Helper()
	if code, _, err := get(context.Background(), "http://"+pr.admin+"/-/ready"); err != nil || code != 200 {
		pr.alive(during)
		pr.t.Errorf("%s: /-/ready answered %d %v", during, code, err)
	}
}

func chaosCounts(s scrape) map[string]float64 {
	out := map[string]float64{}
	f := s.fams["llmprobe_requests_total"]
	for _, m := range f.GetMetric() {
		if l := labelsOf(m); l["target"] == "chaos" {
			out[l["outcome"]+"/"+l["reason"]] += m.GetCounter().GetValue()
		}
	}
	return out
}

// phase runs one phase: enter sets the behaviour, then it waits until
// perPhase more requests of the chaos target ended with each required
// outcome (or the deadline passed).
func (pr *phaseRun) phase(name string, want []want, all bool, to timeouts, enter func()) {
	pr.t.Helper()
	before := chaosCounts(pr.scrape(name + " (start)"))
	if enter != nil {
		enter()
	}
	span := phaseSpan{name: name, want: want, start: time.Now()}
	need := want[:1]
	if all {
		need = want
	}
	deadline := time.Now().Add(to.total + 8*time.Second)
	for {
		time.Sleep(250 * time.Millisecond)
		s := pr.scrape(name)
		now := chaosCounts(s)
		done := true
		for _, w := range need {
			if now[w.String()]-before[w.String()] < perPhase {
				done = false
			}
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			got := map[string]int{}
			for k, v := range now {
				if d := int(v - before[k]); d > 0 {
					got[k] = d
				}
			}
			pr.t.Errorf("phase %s: want %d more requests ending %s within %v; got %s", name, perPhase, wantList(&chaosCase{want: need}),
				to.total+8*time.Second, keysOf(got))
			break
		}
	}
	span.end = time.Now()
	pr.phases = append(pr.phases, span)
	pr.ready(name)
}

// goroutines reads go_goroutines a few times and returns the smallest.
func (pr *phaseRun) goroutines(during string) float64 {
	best := -1.0
	for range 5 {
		s := pr.scrape(during)
		if g := s.sum("go_goroutines", nil); best < 0 || g < best {
			best = g
		}
		time.Sleep(200 * time.Millisecond)
	}
	return best
}

// TestDaemonPhases runs one `llmprobe run` through healthy, down, every
// hostile behaviour of the case table, the TLS phases and healthy again,
// with good and bad reloads on the way, while a second, healthy target
// keeps its schedule.
func TestDaemonPhases(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: one long llmprobe run of the built binary through every hostile behaviour and reloads")
	}
	t.Parallel()
	key := newSentinel()
	binary(t)
	dir := t.TempDir()
	pr := &phaseRun{t: t, cfgPath: filepath.Join(dir, "llmprobe.yaml"), ledger: filepath.Join(dir, "ledger"),
		chaos: newHostile(t, "phases", healthy), control: newHostile(t, "control", healthy), tls: newTLSSwitch(t, dir)}
	plain := chaosTarget{url: pr.chaos.url(), api: "openai-chat", to: defaultTimeouts, enabled: true}
	var err error
	pr.p, pr.admin, err = startDaemon(t, key, pr.cfgPath, func(admin string) {
		pr.admin = admin
		_ = os.RemoveAll(pr.ledger)
		pr.write(pr.config(plain, true))
	})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	ok := []want{w(ledger.OK, ledger.ReasonStop)}

	// Healthy: the baseline of goroutines.
	pr.phase("healthy", ok, false, defaultTimeouts, nil)
	pr.phase("healthy (more)", ok, false, defaultTimeouts, nil)
	baseG := pr.goroutines("healthy (goroutines)")

	// Down: nothing listens.
	pr.phase("down", []want{w(ledger.TransportError, ledger.ReasonConnectionRefused)}, false, defaultTimeouts, pr.chaos.Down)
	pr.chaos.Up(t)

	// Every hostile behaviour of the plain server, grouped by API (a good
	// reload switches the target's API), with two bad reloads on the way.
	byAPI := map[string][]*chaosCase{}
	var apis []string
	for _, c := range cases() {
		if c.kind != plainServer || c.name == "healthy" || c.probeOnly || c.noPhase {
			continue
		}
		if byAPI[c.apiName()] == nil {
			apis = append(apis, c.apiName())
		}
		byAPI[c.apiName()] = append(byAPI[c.apiName()], c)
	}
	n := 0
	for _, api := range apis {
		cur := plain
		cur.api = api
		if api != plain.api {
			pr.reload(cur, true)
		}
		for _, c := range byAPI[api] {
			n++
			c := c
			enter := func() {
				if c.setup != nil {
					c.setup(t)
				}
				pr.chaos.set(c.serve)
				switch {
				case c.ownConfig():
					ct := cur
					ct.to, ct.budget, ct.extra, ct.global = c.timeouts(), c.budget, c.daemonTarget, c.daemonGlobal
					if c.daemonRate() != chaosRate {
						ct.rate = c.daemonRate()
					}
					pr.reload(ct, true)
					if c.daemonRate() != chaosRate {
						// From the accepted reload on (the old stream has
						// stopped): arrivals planned between the signal and
						// the swap still come at the old rate.
						pr.slow = append(pr.slow, rateSpan{start: time.Now(), rate: c.daemonRate()})
					}
				case c.identity:
					pr.hup(true) // the same configuration: the identity is polled again
				}
			}
			switch n {
			case 3: // a file that does not parse
				pr.write("targets: [this is not: a config\n")
				pr.hup(false)
				pr.checkConfigPage("after a refused reload (unparsable file)", cur.url)
				pr.write(pr.config(cur, true))
			case 12: // a configuration whose target cannot be built: its key variable is unset
				pr.write(strings.ReplaceAll(pr.config(cur, true), keyEnv, "LLMPROBE_CHAOS_UNSET"))
				pr.hup(false)
				pr.checkConfigPage("after a refused reload (unset key variable)", cur.url)
				pr.write(pr.config(cur, true))
			}
			pr.phase(c.name, c.want, c.all, c.timeouts(), enter)
			if c.ownConfig() {
				pr.reload(cur, true)
				if c.daemonRate() != chaosRate {
					pr.slow[len(pr.slow)-1].end = time.Now()
				}
			}
		}
	}

	// TLS: a good reload points the chaos target at the HTTPS server.
	secure := chaosTarget{url: pr.tls.url, api: "openai-chat", caFile: pr.tls.caFile, to: defaultTimeouts, enabled: true}
	pr.chaos.set(healthy)
	pr.reload(secure, true)
	pr.phase("tls_healthy_h2", ok, false, defaultTimeouts, nil)
	pr.phase("tls_untrusted", []want{w(ledger.TransportError, ledger.ReasonTLSUntrusted)}, false, defaultTimeouts, func() {
		pr.tls.useUntrusted.Store(true)
		pr.tls.closeConns()
	})
	pr.phase("h2_rst_stream", []want{w(ledger.TransportError, ledger.ReasonConnectionReset)}, false, defaultTimeouts, func() {
		pr.tls.useUntrusted.Store(false)
		pr.tls.rst.Store(true)
		pr.tls.closeConns()
	})
	if pr.tls.h2.Load() == 0 || pr.tls.h1.Load() > 0 {
		t.Errorf("TLS phases: %d HTTP/2 and %d HTTP/1 requests; want HTTP/2 only", pr.tls.h2.Load(), pr.tls.h1.Load())
	}

	// Healthy again, on the plain server.
	pr.chaos.set(healthy)
	pr.reload(plain, true)
	pr.phase("healthy again", ok, false, defaultTimeouts, nil)
	pr.phase("healthy again (more)", ok, false, defaultTimeouts, nil)
	endG := pr.goroutines("healthy again (goroutines)")
	// Leave time for what the hostile phases left in flight to end by its
	// own timeouts before the goroutines are judged.
	if endG > baseG+20 {
		time.Sleep(defaultTimeouts.total)
		endG = pr.goroutines("healthy again (goroutines, later)")
	}

	// Quiesce: stop planning, wait until nothing is in flight; the last
	// scrape and the ledger files then hold the same requests.
	pr.reload(chaosTarget{url: plain.url, api: plain.api, to: defaultTimeouts}, false)
	var final scrape
	deadline := time.Now().Add(defaultTimeouts.total + 10*time.Second)
	var q quiet
	for {
		s := pr.scrape("quiesce")
		if q.settled(s, nil) {
			final = s
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("quiesce: still %v requests in flight %v after planning stopped", s.sum("llmprobe_in_flight_requests", nil), defaultTimeouts.total+10*time.Second)
			final = s
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	quietG := pr.goroutines("quiesced (goroutines)")
	pages := map[string][]byte{"/metrics": final.raw}
	for _, path := range []string{"/debug/requests", "/config", "/"} {
		code, b, err := get(context.Background(), "http://"+pr.admin+path)
		if err != nil || code != 200 {
			t.Errorf("GET %s: %d %v", path, code, err)
		}
		pages[path] = b
	}
	pr.ready("quiesced")
	_ = pr.p.cmd.Process.Signal(syscall.SIGTERM)
	pr.p.wait(t, drainTimeout+15*time.Second)
	t.Logf("%d phases in %v; %d scrapes; %d accepted and %d refused reloads; goroutines: healthy %v, healthy again %v, quiesced %v; peak RSS %s",
		len(pr.phases), time.Since(started).Round(time.Second), pr.scrapes, pr.reloads, pr.refusals, baseG, endG, quietG, mib(pr.p.peakRSS()))

	// Stayed up; no crash; exit 0.
	stderr := pr.p.stderr.Bytes()
	checkNoCrash(t, "run", stderr)
	if code := pr.p.exitCode(); code != 0 {
		t.Errorf("run exited %d after SIGTERM; stderr:\n%s", code, tail(stderr, 3000))
	}
	checkLogs(t, "run", stderr)
	if rss := pr.p.peakRSS(); rss > memBound() {
		t.Errorf("run: peak RSS %s, over the bound %s", mib(rss), mib(memBound()))
	}
	// Goroutines return to their baseline: a hostile phase that left one
	// goroutine behind per request would leave hundreds.
	if endG > baseG+20 {
		t.Errorf("goroutines: %v while healthy at the start, %v while healthy at the end: leaked", baseG, endG)
	}
	if quietG > baseG {
		t.Errorf("goroutines: %v with nothing planned or in flight, more than the %v of the healthy start", quietG, baseG)
	}

	// The key appears nowhere.
	recs, raw, err := readLedgerDir(pr.ledger)
	if err != nil {
		t.Fatalf("ledger files: %v", err)
	}
	pages["ledger files"] = raw
	pages["stderr (logs)"] = stderr
	pages["stdout"] = pr.p.stdout.Bytes()
	for name, b := range pages {
		if frag := key.leak(b); frag != "" {
			t.Errorf("the API key leaked into %s: …%s…", name, leakContext(b, frag))
		}
	}

	// The ledger files: invariants, and the last scrape adds up to them.
	checkRecords(t, "ledger files", recs)
	checkLabels(t, "run", final)
	for _, target := range []string{"control", "chaos"} {
		checkMetricsAddUp(t, target, final, recs, target)
	}
	epoch := pr.checkPhases(recs)
	every := func(rate float64) time.Duration { return time.Duration(float64(time.Second) / rate) }
	checkRate(t, "control", recs, epoch, func(time.Time) time.Duration { return every(controlRate) }, 0, pr.swaps)
	checkRate(t, "chaos", recs, epoch, func(at time.Time) time.Duration {
		for _, sp := range pr.slow {
			if !at.Before(sp.start) && !at.After(sp.end) {
				return every(sp.rate)
			}
		}
		return every(chaosRate)
	}, 1, pr.swaps)
}

// checkConfigPage asserts /config still shows the running configuration's
// chaos target after a refused reload.
func (pr *phaseRun) checkConfigPage(during, url string) {
	pr.t.Helper()
	pr.ready(during)
	_, b, err := get(context.Background(), "http://"+pr.admin+"/config")
	if err != nil {
		pr.t.Errorf("%s: GET /config: %v", during, err)
		return
	}
	host := strings.TrimPrefix(strings.TrimSuffix(url, "/v1"), "http://")
	if !bytes.Contains(b, []byte(host)) {
		pr.t.Errorf("%s: /config does not show the running target %s:\n%s", during, host, tail(b, 1500))
	}
}

// checkPhases judges every chaos record by the phase it was planned in, and
// every control record: always ok. It returns the ledger's epoch.
func (pr *phaseRun) checkPhases(recs []ledger.Record) time.Time {
	t := pr.t
	lf, _, err := readLedger(filepath.Join(pr.ledger, "ledger.jsonl"))
	if err != nil {
		t.Errorf("ledger header: %v", err)
		return time.Time{}
	}
	epoch := time.Unix(0, lf.header.EpochUnixNano)
	bad := map[string]int{}
	for i := range recs {
		r := &recs[i]
		at := epoch.Add(r.Planned)
		if r.Target == "control" {
			if r.Outcome != ledger.OK {
				bad[fmt.Sprintf("control target: %s/%s (%s)", r.Outcome, r.Reason, r.Error)]++
			}
			continue
		}
		for _, ph := range pr.phases {
			if at.Before(ph.start.Add(settle)) || at.After(ph.end.Add(-settle)) {
				continue
			}
			allowed := false
			for _, w := range ph.want {
				allowed = allowed || w.outcome == r.Outcome && w.reason == r.Reason
			}
			if !allowed {
				bad[fmt.Sprintf("phase %s: %s/%s (%s), want %s", ph.name, r.Outcome, r.Reason, r.Error, wantList(&chaosCase{want: ph.want}))]++
			}
		}
	}
	keys := make([]string, 0, len(bad))
	for k := range bad {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Errorf("%d× %s", bad[k], k)
	}
	return epoch
}

// checkRate asserts the baseline kept its schedule: every planned arrival is
// in the ledger and was sent, and consecutive arrivals are exactly one
// period apart (periodAt: the period in force at a wall time), except
// across a reload: a new stream's first arrival is half a period (and the
// target's stagger) after it starts, so at most one gap per reload differs,
// and it is never under half a period nor over two periods and the stagger,
// or, when reloads fell between the two arrivals (a case's own rate may be
// switched in and out again before its stream planned anything), the later
// arrival comes no later than half its period and the stagger after the last
// of those reloads was done.
func checkRate(t *testing.T, target string, recs []ledger.Record, epoch time.Time, periodAt func(time.Time) time.Duration, index int, swaps []swapSpan) {
	t.Helper()
	var planned []time.Duration
	byPlanned := map[time.Duration]*ledger.Record{}
	unsent := 0
	for i := range recs {
		r := &recs[i]
		if r.Target != target || r.Traffic != ledger.TrafficBaseline || r.IsRetry() {
			continue
		}
		planned = append(planned, r.Planned)
		byPlanned[r.Planned] = r
		if r.Outcome == ledger.Unsent {
			unsent++
		}
	}
	sort.Slice(planned, func(i, j int) bool { return planned[i] < planned[j] })
	if unsent > 0 {
		t.Errorf("%s: %d arrivals were never sent", target, unsent)
	}
	near := func(g, p time.Duration) bool { return g > p-time.Millisecond && g < p+time.Millisecond }
	irregular := 0
	for i := 1; i < len(planned); i++ {
		g := planned[i] - planned[i-1]
		pa, pb := periodAt(epoch.Add(planned[i-1])), periodAt(epoch.Add(planned[i]))
		if near(g, pa) || near(g, pb) {
			continue
		}
		irregular++
		lo, hi := min(pa, pb)/2-5*time.Millisecond, 2*max(pa, pb)+time.Duration(index)*stagger+500*time.Millisecond
		if g > hi {
			// The streams were swapped between the two: the later one is
			// the first of a stream started by the last swap between them.
			before, after := epoch.Add(planned[i-1]), epoch.Add(planned[i])
			for _, sw := range swaps {
				if sw.done.After(before) && sw.signal.Before(after) {
					if late := after.Sub(sw.done); late <= pb/2+time.Duration(index)*stagger+500*time.Millisecond {
						hi = g
					}
				}
			}
		}
		if g < lo || g > hi {
			ra, rb := byPlanned[planned[i-1]], byPlanned[planned[i]]
			t.Errorf("%s: arrivals %v apart (period %v, %v): outside [%v, %v], the schedule broke\n\tbefore: id %d planned %v dispatched %v %s/%s\n\tafter:  id %d planned %v dispatched %v %s/%s",
				target, g, pa, pb, lo, hi, ra.ID, ra.Planned, ra.Dispatched, ra.Outcome, ra.Reason, rb.ID, rb.Planned, rb.Dispatched, rb.Outcome, rb.Reason)
		}
	}
	if reloads := len(swaps); irregular > reloads {
		t.Errorf("%s: %d gaps between arrivals that are not the period, more than the %d reloads explain", target, irregular, reloads)
	}
	if len(planned) > 1 {
		span := planned[len(planned)-1] - planned[0]
		t.Logf("%s: %d arrivals over %v (%d reloads, %d gaps that are not the period)", target, len(planned), span.Round(time.Millisecond), len(swaps), irregular)
	}
}
