package chaos

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// keyEnv is the environment variable the processes read the API key from.
const keyEnv = "LLMPROBE_CHAOS_KEY"

// sentinel is the API key every process sends: "sk-chaos-" and 32 random
// hex digits, fresh per test process. Any 10 consecutive digits of it found
// in an output is a leak (a cut or reworded key still leaks).
type sentinel struct{ key, secret string }

func newSentinel() sentinel {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	s := hex.EncodeToString(b)
	return sentinel{key: "sk-chaos-" + s, secret: s}
}

// leak returns the first fragment of the key found in text, or "".
func (s sentinel) leak(text []byte) string {
	const w = 10
	for i := 0; i+w <= len(s.secret); i++ {
		if bytes.Contains(text, []byte(s.secret[i:i+w])) {
			return s.secret[i : i+w]
		}
	}
	return ""
}

// leakContext is the text around a leaked fragment, for the failure message.
func leakContext(text []byte, frag string) string {
	i := bytes.Index(text, []byte(frag))
	if i < 0 {
		return ""
	}
	lo, hi := max(0, i-120), min(len(text), i+len(frag)+60)
	return strings.ToValidUTF8(string(text[lo:hi]), "?")
}

// llmprobe is built with the race detector when the tests run with it, so
// that a data race in the daemon under hostile input fails the suite too.
var llmprobe = testutil.Binary{Race: raceEnabled}

// binary is the built llmprobe, or $LLMPROBE_CHAOS_BIN when set.
func binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("LLMPROBE_CHAOS_BIN"); bin != "" {
		return bin // e.g. an older build, to see which cases it fails
	}
	return llmprobe.Path(t)
}

// handedOut are the ports freePort returned in this test process: never
// twice, so that two daemons started at once never pick the same one.
var handedOut = struct {
	sync.Mutex
	ports map[string]bool
}{ports: map[string]bool{}}

// freePort returns a 127.0.0.1 address nothing listened on a moment ago,
// and that it never returned before.
func freePort(t testing.TB) string {
	t.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		handedOut.Lock()
		seen := handedOut.ports[addr]
		handedOut.ports[addr] = true
		handedOut.Unlock()
		if !seen {
			return addr
		}
	}
}

// syncBuffer is a goroutine-safe output buffer.
type syncBuffer = testutil.SyncBuffer

// proc is a running llmprobe process.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
	hwmMu          sync.Mutex
	hwm            int64 // peak RSS seen, bytes
}

// startProc starts the binary with args and the sentinel key in its
// environment.
func startProc(t testing.TB, key sentinel, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(binary(t), args...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	env := testutil.Env(keyEnv + "=" + key.key)
	if raceEnabled {
		env = append(env, "GORACE=halt_on_error=0 exitcode=66")
	}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting llmprobe: %v", err)
	}
	go func() {
		_ = p.cmd.Wait() // the exit status is read from cmd.ProcessState
		close(p.done)
	}()
	go p.watchMemory()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the process to exit, killing it (and failing) after
// within.
func (p *proc) wait(t testing.TB, within time.Duration) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		_ = p.cmd.Process.Signal(syscall.SIGQUIT) // a goroutine dump on stderr, for the failure message
		select {
		case <-p.done:
		case <-time.After(3 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		t.Errorf("llmprobe %s did not exit within %v; stderr tail:\n%s", p.cmd.Args[1], within, tail(p.stderr.Bytes(), 6000))
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) exitCode() int {
	if p.cmd.ProcessState == nil {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// watchMemory samples the process's peak resident set size (VmHWM, the
// high-water mark of its own address space) every 25 ms until it exits.
// The exit status's ru_maxrss cannot be used: a child started with
// vfork inherits the test process's own peak.
func (p *proc) watchMemory() {
	path := fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid)
	t := time.NewTicker(25 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				var kb int64
				if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kb); err == nil {
					p.hwmMu.Lock()
					p.hwm = max(p.hwm, kb*1024)
					p.hwmMu.Unlock()
					break
				}
			}
		}
		select {
		case <-p.done:
			return
		case <-t.C:
		}
	}
}

// peakRSS is the process's peak resident set size in bytes, as last
// sampled (at most 25 ms before it exited).
func (p *proc) peakRSS() int64 {
	p.hwmMu.Lock()
	defer p.hwmMu.Unlock()
	return p.hwm
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.ToValidUTF8(string(b), "?")
}

// crashMarks are what a crash, a data race or a runtime failure leaves on
// stderr.
var crashMarks = []string{"panic:", "fatal error:", "DATA RACE", "goroutine ", "SIGSEGV", "runtime error"}

func checkNoCrash(t testing.TB, what string, stderr []byte) {
	t.Helper()
	for _, m := range crashMarks {
		if i := bytes.Index(stderr, []byte(m)); i >= 0 {
			lo := max(0, i-200)
			t.Errorf("%s: stderr shows %q:\n%s", what, m, tail(stderr[lo:], 4000))
			return
		}
	}
}

// ----- HTTP -----

var httpClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

func get(ctx context.Context, url string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// waitReady waits until the process says its admin server listens and
// /-/ready answers 200 (the port is then its own, not another process's).
func waitReady(p *proc, admin string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if p.exited() {
			return fmt.Errorf("llmprobe run exited (code %d) before it was ready; stderr:\n%s", p.exitCode(), tail(p.stderr.Bytes(), 4000))
		}
		listening := bytes.Contains(p.stderr.Bytes(), []byte(`"msg":"Listening on"`))
		if code, _, err := get(context.Background(), "http://"+admin+"/-/ready"); listening && err == nil && code == 200 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("llmprobe run not ready within %v; stderr:\n%s", within, tail(p.stderr.Bytes(), 4000))
}

// startDaemon starts `llmprobe run --config path` with its admin server on
// a free port (write writes the configuration for that address) and waits
// until it is ready. A port another socket took between its choice and the
// daemon's bind is retried with another one.
func startDaemon(t testing.TB, key sentinel, path string, write func(admin string)) (p *proc, admin string, err error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		admin = freePort(t)
		write(admin)
		p = startProc(t, key, "run", "--config", path)
		err = waitReady(p, admin, 15*time.Second)
		if err == nil || attempt == 3 || !p.exited() || !bytes.Contains(p.stderr.Bytes(), []byte("address already in use")) {
			return p, admin, err
		}
	}
}

// refusedAddr returns a 127.0.0.1 address that refuses connections until
// the test ends: its port is bound (so no other socket takes it) but not
// listening.
func refusedAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}

// ----- /metrics -----

// scrape is one parsed /metrics exposition (text format) and its raw bytes.
type scrape struct {
	raw  []byte
	fams map[string]*dto.MetricFamily
}

func scrapeMetrics(admin string) (scrape, error) {
	code, b, err := get(context.Background(), "http://"+admin+"/metrics")
	if err != nil {
		return scrape{}, err
	}
	if code != 200 {
		return scrape{}, fmt.Errorf("/metrics: status %d: %s", code, tail(b, 500))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return scrape{}, fmt.Errorf("/metrics does not parse: %w", err)
	}
	return scrape{raw: b, fams: fams}, nil
}

func labelsOf(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func match(m *dto.Metric, sel map[string]string) bool {
	l := labelsOf(m)
	for k, v := range sel {
		if l[k] != v {
			return false
		}
	}
	return true
}

// sum adds the values of the counter or gauge name over the series that
// match sel.
func (s scrape) sum(name string, sel map[string]string) float64 {
	f := s.fams[name]
	if f == nil {
		return 0
	}
	var v float64
	for _, m := range f.GetMetric() {
		if !match(m, sel) {
			continue
		}
		switch {
		case m.Counter != nil:
			v += m.GetCounter().GetValue()
		case m.Gauge != nil:
			v += m.GetGauge().GetValue()
		case m.Untyped != nil:
			v += m.GetUntyped().GetValue()
		}
	}
	return v
}

// has reports whether name has a series matching sel.
func (s scrape) has(name string, sel map[string]string) bool {
	f := s.fams[name]
	if f == nil {
		return false
	}
	for _, m := range f.GetMetric() {
		if match(m, sel) {
			return true
		}
	}
	return false
}

// histCount adds the sample counts of histogram name over matching series.
func (s scrape) histCount(name string, sel map[string]string) uint64 {
	f := s.fams[name]
	if f == nil {
		return 0
	}
	var n uint64
	for _, m := range f.GetMetric() {
		if match(m, sel) && m.Histogram != nil {
			n += m.GetHistogram().GetSampleCount()
		}
	}
	return n
}

// counters returns every monotonic value of the scrape by series: counter
// values and histogram sample counts and sums.
func (s scrape) counters() map[string]float64 {
	out := map[string]float64{}
	for name, f := range s.fams {
		for _, m := range f.GetMetric() {
			key := name + seriesKey(labelsOf(m))
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[key+"_count"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func seriesKey(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", k, l[k])
	}
	b.WriteByte('}')
	return b.String()
}

// checkLabels asserts every label value of the exposition is valid UTF-8,
// printable and bounded: whatever a server sent went through the sanitiser.
func checkLabels(t testing.TB, what string, s scrape) {
	t.Helper()
	for name, f := range s.fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if msg := unclean(l.GetValue(), 256); msg != "" {
					t.Errorf("%s: /metrics %s{%s=%q}: %s", what, name, l.GetName(), l.GetValue(), msg)
				}
			}
		}
	}
}

// unclean says what is wrong with a server-derived string, or "".
func unclean(s string, maxLen int) string {
	switch {
	case !utf8.ValidString(s):
		return "not valid UTF-8"
	case len(s) > maxLen:
		return fmt.Sprintf("%d bytes, over %d", len(s), maxLen)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return fmt.Sprintf("holds the unprintable %U", r)
		}
	}
	return ""
}

// ----- the ledger -----

// ledgerFile is one JSONL ledger: its run header and records.
type ledgerFile struct {
	header  ledger.RunHeader
	records []ledger.Record
}

// readLedger parses a JSONL ledger file (a header line, then records).
func readLedger(path string) (ledgerFile, []byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ledgerFile{}, nil, err
	}
	var lf ledgerFile
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if !utf8.Valid(sc.Bytes()) {
			return lf, b, fmt.Errorf("%s:%d: not valid UTF-8", path, line)
		}
		if line == 1 {
			if err := json.Unmarshal(sc.Bytes(), &lf.header); err != nil || lf.header.Kind != "run" {
				return lf, b, fmt.Errorf("%s:1: not a run header (%v)", path, err)
			}
			continue
		}
		var r ledger.Record
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return lf, b, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		lf.records = append(lf.records, r)
	}
	return lf, b, sc.Err()
}

// readLedgerDir reads every ledger file of a daemon's ledger.dir (rotated
// ones first), returning the records and every file's bytes.
func readLedgerDir(dir string) ([]ledger.Record, []byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "ledger*.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return nil, nil, errors.New("no ledger file in " + dir)
	}
	sort.Slice(files, func(i, j int) bool { // ledger.jsonl is the active (newest) file
		if filepath.Base(files[i]) == "ledger.jsonl" {
			return false
		}
		if filepath.Base(files[j]) == "ledger.jsonl" {
			return true
		}
		return files[i] < files[j]
	})
	var recs []ledger.Record
	var raw []byte
	for _, f := range files {
		lf, b, err := readLedger(f)
		raw = append(raw, b...)
		if err != nil {
			return nil, raw, err
		}
		recs = append(recs, lf.records...)
	}
	return recs, raw, nil
}

// checkRecords asserts the ledger invariants every record set must keep:
// one terminal outcome per id, a reason from the outcome's closed set,
// planned = dispatched + unsent, ordered stamps, and server-derived strings
// that went through the sanitiser.
func checkRecords(t testing.TB, what string, recs []ledger.Record) {
	t.Helper()
	seen := make(map[uint64]bool, len(recs))
	var planned, first, sent, unsent, retries int
	bad := 0
	report := func(format string, a ...any) {
		bad++
		if bad <= 10 {
			t.Errorf(what+": "+format, a...)
		}
	}
	for i := range recs {
		r := &recs[i]
		if seen[r.ID] {
			report("record %d appears twice (two terminal outcomes)", r.ID)
		}
		seen[r.ID] = true
		if !ledger.Valid(r.Outcome, r.Reason) {
			report("record %d: %s/%s is not a pair of the closed set", r.ID, r.Outcome, r.Reason)
		}
		planned++
		if r.IsRetry() {
			retries++
		} else {
			first++
		}
		switch {
		case r.Outcome == ledger.Unsent:
			unsent++
			if r.Dispatched != 0 {
				report("record %d: unsent but dispatched at %v", r.ID, r.Dispatched)
			}
		default:
			sent++
			if r.Dispatched == 0 {
				report("record %d: %s/%s but never dispatched", r.ID, r.Outcome, r.Reason)
			}
		}
		if r.Planned <= 0 && r.ID != 0 && r.Outcome != ledger.Unsent {
			// planned is always set (an offset ≥ 1ns)
			report("record %d: no planned time", r.ID)
		}
		// Ordered stamps: planned ≤ dispatched ≤ headers ≤ first byte ≤
		// first content ≤ last content ≤ end, over the stamps reached.
		chain := []struct {
			n string
			v time.Duration
		}{{"planned", r.Planned}, {"dispatched", r.Dispatched}, {"headers", r.Headers}, {"first_byte", r.FirstByte},
			{"first_content", r.FirstContent}, {"last_content", r.LastContent}, {"end", r.End}}
		prev := chain[0]
		for _, c := range chain[1:] {
			if c.v == 0 {
				continue
			}
			if c.v < prev.v {
				report("record %d: %s %v before %s %v", r.ID, c.n, c.v, prev.n, prev.v)
			}
			prev = c
		}
		if r.Outcome != ledger.Unsent && r.End == 0 {
			report("record %d: %s/%s without an end", r.ID, r.Outcome, r.Reason)
		}
		for _, f := range []struct {
			n   string
			v   string
			max int
		}{{"model", r.Model, ledger.MaxModelBytes}, {"finish_reason", r.FinishReason, ledger.MaxFinishReasonBytes}, {"error", r.Error, ledger.MaxErrorBytes}} {
			if msg := unclean(f.v, f.max); msg != "" {
				report("record %d: %s %q: %s", r.ID, f.n, f.v, msg)
			}
		}
		if r.Usage.Prompt < 0 || r.Usage.Completion < 0 || r.Usage.Reasoning < 0 {
			report("record %d: negative token counts %+v", r.ID, r.Usage)
		}
	}
	if planned != sent+unsent {
		report("attempts %d != dispatched %d + unsent %d", planned, sent, unsent)
	}
}

// tally counts records by "outcome/reason".
func tally(recs []ledger.Record) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		out[string(r.Outcome)+"/"+string(r.Reason)]++
	}
	return out
}

func keysOf(m map[string]int) string {
	ks := make([]string, 0, len(m))
	for k, v := range m {
		ks = append(ks, fmt.Sprintf("%s×%d", k, v))
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}

// mib formats bytes as MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
