package llamacpp

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// The daemon run's timeouts: short, so that a stopped server's requests end
// within the phase. A request planned more than phaseGuard before a phase
// boundary has ended before it.
const (
	daemonRate = 4.0
	phaseGuard = 5 * time.Second // timeouts.total 4s, and room
)

func daemonConfig(admin, ledgerDir, url string) string {
	return fmt.Sprintf(`admin: {listen: %q}
log: {level: info, format: json}
ledger: {dir: %q}
drain: {timeout: 5s}
targets:
  - name: llama
    url: %q
    api: openai-chat
    model: tiny
    timeouts: {connect: 1s, headers: 2s, first_content: 2s, idle: 2s, total: 4s}
    max_in_flight: 64
    baseline: {rate: %g, arrival: constant, seed: 1}
    classes:
      - name: default
        input: {dist: fixed, value: %d}
        output: {dist: fixed, value: %d}
`, admin, ledgerDir, url, daemonRate, probePromptTokens, probeMaxTokens)
}

// phase is a stretch of the daemon run and what a request planned in it
// must end as.
type phase struct {
	name       string
	start, end time.Time // wall clock, as the test saw it
	// from, to narrow the stretch whose records are checked: requests
	// planned near a boundary may end either way.
	from, to time.Duration
	want     func(r ledger.Record) bool
	wantText string
	scrape   map[string]float64 // the daemon's /metrics at the phase's end
}

// TestDaemonPhases runs `llmprobe run` against llama-server through normal
// service, SIGSTOP, SIGCONT, a kill and a restart on the same port, reading
// the daemon's /metrics at the end of each phase and its ledger at the end.
func TestDaemonPhases(t *testing.T) {
	testutil.RequireLlamaCpp(t)
	bin := binary(t)
	srv := testutil.StartLlamaCpp(t)
	tmp := t.TempDir()
	admin := fmt.Sprintf("127.0.0.1:%d", testutil.EnginePort(t))
	cfg := filepath.Join(tmp, "llmprobe.yaml")
	ledgerDir := filepath.Join(tmp, "ledger")
	if err := os.WriteFile(cfg, []byte(daemonConfig(admin, ledgerDir, srv.URL()+"/v1")), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config.file", cfg)
	cmd.Env = testutil.Env()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr // written only by the child's copying goroutine
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-done
		}
	})
	metricsURL := "http://" + admin + "/metrics"
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := httpClient.Get("http://" + admin + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("llmprobe run not ready within 20s:\n%s", testutil.Tail(stderr.String(), 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}

	var phases []*phase
	begin := func(name string, from, to time.Duration, wantText string, want func(ledger.Record) bool) *phase {
		p := &phase{name: name, start: time.Now(), from: from, to: to, want: want, wantText: wantText}
		if n := len(phases); n > 0 {
			phases[n-1].end = p.start
		}
		phases = append(phases, p)
		return p
	}
	scrapeAt := func(p *phase, after time.Duration) {
		time.Sleep(time.Until(p.start.Add(after)))
		m, err := scrapeMetrics(metricsURL)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		p.scrape = m
	}
	isOK := func(r ledger.Record) bool { return r.Outcome == ledger.OK }

	// Normal service. A phase that ends in a SIGSTOP or a kill checks only
	// requests planned phaseGuard before its end: one still in flight at the
	// signal (on a loaded host a 1 s request may take several) ends as the
	// signal makes it.
	p := begin("normal", 0, -phaseGuard, "ok", isOK)
	scrapeAt(p, 15*time.Second)
	// SIGSTOP: the kernel still accepts connections; nothing answers.
	srv.Signal(t, syscall.SIGSTOP)
	p = begin("stopped", 0, -phaseGuard, "timeout (any reason)", func(r ledger.Record) bool { return r.Outcome == ledger.Timeout })
	scrapeAt(p, 10*time.Second)
	// SIGCONT: it recovers.
	srv.Signal(t, syscall.SIGCONT)
	p = begin("continued", 2*time.Second, -phaseGuard, "ok", isOK)
	scrapeAt(p, 10*time.Second)
	// Killed (SIGKILL: a crash), then restarted on the same port. Until
	// the restart nothing listens; while the new server loads its model it
	// answers 503, then ok: only the stretch before the restart is checked.
	srv.Stop(t, syscall.SIGKILL)
	p = begin("killed", 0, 0, "transport_error", func(r ledger.Record) bool { return r.Outcome == ledger.TransportError })
	time.Sleep(5 * time.Second)
	restart := time.Now()
	srv.Start(t)
	scrapeAt(p, 0)
	p.to = -time.Since(restart)
	p = begin("restarted", 500*time.Millisecond, -time.Second, "ok", isOK)
	scrapeAt(p, 10*time.Second)
	p.end = time.Now()

	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		stopped = true
		if err != nil {
			t.Errorf("llmprobe run ended with %v after SIGTERM", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("llmprobe run did not stop within 20s of SIGTERM")
	}
	if t.Failed() {
		t.Logf("llmprobe run output:\n%s", testutil.Tail(stderr.String(), 3000))
	}
	checkMonotone(t, phases)
	checkPhaseMetrics(t, phases)
	checkPhaseLedger(t, ledgerDir, phases)
}

// checkMonotone asserts no _total counter of the daemon ever went down
// from one phase's end to the next (a series may appear, never vanish).
func checkMonotone(t *testing.T, phases []*phase) {
	t.Helper()
	n := 0
	for i := 1; i < len(phases); i++ {
		prev, cur := phases[i-1].scrape, phases[i].scrape
		for k, v := range prev {
			if !strings.Contains(k, "_total") && !strings.Contains(k, "_count{") {
				continue
			}
			n++
			if w, ok := cur[k]; !ok || w < v {
				t.Errorf("%s → %s: %s went from %g to %g (present: %t)", phases[i-1].name, phases[i].name, k, v, w, ok)
			}
		}
	}
	t.Logf("daemon: %d counter readings across %d phases, none went down", n, len(phases))
}

// outcomes sums llmprobe_requests_total by outcome/reason.
func outcomes(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if !strings.HasPrefix(k, "llmprobe_requests_total{") {
			continue
		}
		out[label(k, "outcome")+"/"+label(k, "reason")] += v
	}
	return out
}

func label(series, name string) string {
	i := strings.Index(series, name+`="`)
	if i < 0 {
		return ""
	}
	s := series[i+len(name)+2:]
	if j := strings.IndexByte(s, '"'); j >= 0 {
		return s[:j]
	}
	return s
}

// checkPhaseMetrics asserts each phase's increase of llmprobe_requests_total
// says what the phase was.
func checkPhaseMetrics(t *testing.T, phases []*phase) {
	t.Helper()
	prev := map[string]float64{}
	for _, p := range phases {
		cur := outcomes(p.scrape)
		delta := map[string]float64{}
		byOutcome := map[string]float64{}
		for k, v := range cur {
			if d := v - prev[k]; d != 0 {
				delta[k] = d
				byOutcome[strings.SplitN(k, "/", 2)[0]] += d
			}
		}
		prev = cur
		t.Logf("daemon phase %s (%.1f s): /metrics llmprobe_requests_total increase: %s", p.name, p.end.Sub(p.start).Seconds(), formatCounts(delta))
		switch p.name {
		case "normal", "continued", "restarted":
			if byOutcome["ok"] == 0 {
				t.Errorf("phase %s: no ok request counted", p.name)
			}
		case "stopped":
			if byOutcome["timeout"] == 0 {
				t.Errorf("phase %s: no timeout counted", p.name)
			}
			if byOutcome["ok"] > 2 {
				t.Errorf("phase %s: %g ok requests counted while the server was stopped (at most the 2 in flight at the stop)", p.name, byOutcome["ok"])
			}
		case "killed":
			if byOutcome["transport_error"] == 0 {
				t.Errorf("phase %s: no transport error counted", p.name)
			}
		}
	}
}

// checkPhaseLedger asserts every request planned inside a phase (away from
// its boundaries) ended as the phase says.
func checkPhaseLedger(t *testing.T, dir string, phases []*phase) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "ledger*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no ledger file in %s (%v)", dir, err)
	}
	var recs []ledger.Record
	var epoch time.Time
	for _, f := range files {
		lf, err := readLedger(f)
		if err != nil {
			t.Fatal(err)
		}
		if epoch.IsZero() || time.Unix(0, lf.header.EpochUnixNano).Before(epoch) {
			epoch = time.Unix(0, lf.header.EpochUnixNano)
		}
		recs = append(recs, lf.records...)
	}
	for _, p := range phases {
		from, to := p.start.Add(p.from), p.end.Add(p.to)
		tally := map[string]float64{}
		checked, bad := 0, 0
		for _, r := range recs {
			at := epoch.Add(r.Planned)
			if at.Before(p.start) || !at.Before(p.end) {
				continue
			}
			tally[string(r.Outcome)+"/"+string(r.Reason)]++
			if at.Before(from) || !at.Before(to) {
				continue
			}
			checked++
			if !p.want(r) {
				bad++
				if bad <= 5 {
					t.Errorf("phase %s: record %d planned %.2f s into it ended %s/%s (%q), want %s",
						p.name, r.ID, at.Sub(p.start).Seconds(), r.Outcome, r.Reason, r.Error, p.wantText)
				}
			}
		}
		t.Logf("daemon phase %s: ledger: %d requests planned in it: %s; %d checked (planned %v..%v of its %.1f s): want %s, %d not",
			p.name, int(sumCounts(tally)), formatCounts(tally), checked, p.from, p.end.Sub(p.start)+p.to, p.end.Sub(p.start).Seconds(), p.wantText, bad)
		if checked == 0 {
			t.Errorf("phase %s: no request planned inside it", p.name)
		}
	}
}

func formatCounts(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+strconv.FormatFloat(m[k], 'f', -1, 64))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

func sumCounts(m map[string]float64) float64 {
	var s float64
	for _, v := range m {
		s += v
	}
	return s
}
