package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/telemetry"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Fault modes of the fake target.
const (
	modeOK    int32 = iota // a short, well-formed stream
	mode503                // 503 Service Unavailable
	modeStall              // never sends a byte of the response
	modeReset              // headers and one chunk, then a TCP reset
)

// fakeTarget is an OpenAI-compatible chat endpoint whose behaviour tests
// switch at run time: its fault mode, the model its responses name and the
// field its GET /v1/models entry carries.
type fakeTarget struct {
	url    string // base URL including /v1
	mode   atomic.Int32
	model  atomic.Value // string: the model named in responses
	root   atomic.Value // string: /v1/models data[0].root
	hits   atomic.Int64 // generation requests received
	traced atomic.Int64 // generation requests that carried a traceparent header
	stop   chan struct{}
}

func newFakeTarget(t *testing.T) *fakeTarget {
	t.Helper()
	f := &fakeTarget{stop: make(chan struct{})}
	f.model.Store("fake-model")
	f.root.Store("build-1")
	srv := httptest.NewServer(f)
	f.url = srv.URL + "/v1"
	t.Cleanup(func() {
		close(f.stop)
		srv.Close()
	})
	return f
}

func (f *fakeTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []map[string]any{
			{"id": "fake-model", "object": "model", "root": f.root.Load().(string)},
		}})
		return
	case "/v1/chat/completions":
	default:
		http.NotFound(w, r)
		return
	}
	f.hits.Add(1)
	if r.Header.Get("Traceparent") != "" {
		f.traced.Add(1)
	}
	_, _ = io.Copy(io.Discard, r.Body)
	model := f.model.Load().(string)
	chunk := func(delta, finish string) string {
		fr := "null"
		if finish != "" {
			fr = `"` + finish + `"`
		}
		return `data: {"id":"c1","object":"chat.completion.chunk","model":"` + model +
			`","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fr + `}]}` + "\n\n"
	}
	switch f.mode.Load() {
	case mode503:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
	case modeStall:
		select {
		case <-r.Context().Done():
		case <-f.stop:
		}
	case modeReset:
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic("fake target: no hijacker")
		}
		conn, buf, err := hj.Hijack()
		if err != nil {
			return
		}
		body := chunk(`{"role":"assistant","content":"hel"}`, "")
		_, _ = fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(body), body)
		_ = buf.Flush()
		time.Sleep(20 * time.Millisecond)
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // close with RST
		}
		_ = conn.Close()
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		for _, s := range []string{
			chunk(`{"role":"assistant","content":""}`, ""),
			chunk(`{"content":"hello"}`, ""),
			chunk(`{"content":" world"}`, ""),
			chunk(`{}`, "stop"),
			`data: {"id":"c1","model":"` + model + `","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}` + "\n\n",
			"data: [DONE]\n\n",
		} {
			_, _ = io.WriteString(w, s)
			fl.Flush()
		}
	}
}

// targetYAML is one target entry probing url with a fast baseline and
// short timeouts; extra is appended to the entry (indented by 4).
func targetYAML(name, url string, rate float64, extra string) string {
	return fmt.Sprintf(`
  - name: %s
    url: %s
    model: fake-model
    max_in_flight: 64
    timeouts: {connect: 1s, headers: 300ms, first_content: 600ms, idle: 400ms, total: 2s}
    baseline: {rate: %g, arrival: constant}
    classes:
      - name: chat
        input: {dist: fixed, value: 16}
        output: {dist: fixed, value: 4}
        gates: {ttft: 1s}
%s`, name, url, rate, extra)
}

// loadConfig builds a validated config from YAML (no file, no environment).
func loadConfig(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.LoadWith(config.Options{BuiltIn: []byte(yaml), Environ: func() []string { return nil }})
	if err != nil {
		t.Fatalf("config: %v\n%s", err, yaml)
	}
	return cfg
}

func configYAML(drain string, targets ...string) string {
	return "admin: {listen: \"127.0.0.1:0\"}\ndrain: {timeout: " + drain + "}\ntargets:" + strings.Join(targets, "")
}

// running is a daemon under test.
type running struct {
	d      *Daemon
	rec    *telemetry.Recorder
	admin  string                         // http://127.0.0.1:port
	source *atomic.Pointer[config.Config] // what the daemon's Options.Load gives
	cancel context.CancelFunc
	errc   chan error
	err    error
	done   bool
	client *http.Client
}

// testSource is a daemon's configuration source under test: Load gives
// the configuration last stored, as a file read again would.
type testSource struct {
	cfg *atomic.Pointer[config.Config]
}

func configSource(cfg *config.Config) testSource {
	s := testSource{cfg: &atomic.Pointer[config.Config]{}}
	s.cfg.Store(cfg)
	return s
}

func (s testSource) load() (*config.Config, error) { return s.cfg.Load(), nil }

// reloadTo reloads the daemon through its one reload path (Reload), its
// configuration source now giving cfg.
func (r *running) reloadTo(cfg *config.Config) error {
	r.source.Store(cfg)
	return r.d.Reload(context.Background(), "test")
}

// mustReload is reloadTo, failing the test when the reload is refused.
func (r *running) mustReload(t *testing.T, cfg *config.Config) {
	t.Helper()
	if err := r.reloadTo(cfg); err != nil {
		t.Fatalf("reload refused: %v", err)
	}
}

// startDaemon runs a daemon on cfg with the admin server on 127.0.0.1:0
// and a short tick; it is stopped at the end of the test if still running.
func startDaemon(t *testing.T, cfg *config.Config, mod func(*Options)) *running {
	t.Helper()
	rec, err := telemetry.New(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	source := configSource(cfg)
	o := Options{Config: cfg, Recorder: rec, Listener: l, Tick: 50 * time.Millisecond, IdentityEvery: 100 * time.Millisecond,
		Load: source.load}
	if mod != nil {
		mod(&o)
	}
	d, err := New(o)
	if err != nil {
		_ = l.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{d: d, rec: rec, admin: "http://" + l.Addr().String(), source: source.cfg,
		cancel: cancel, errc: make(chan error, 1),
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	go func() { r.errc <- d.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	waitFor(t, 5*time.Second, "admin ready", func() bool {
		resp, err := r.client.Get(r.admin + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return r
}

// stop cancels the daemon and waits for Run to return.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	if r.done {
		return r.err
	}
	r.done = true
	r.cancel()
	select {
	case r.err = <-r.errc:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of cancel")
	}
	return r.err
}

// metrics scrapes /metrics over HTTP (text format).
func (r *running) metrics(t *testing.T) map[string]*familyView {
	t.Helper()
	resp, err := r.client.Get(r.admin + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bufio.NewReader(resp.Body))
	if err != nil {
		t.Fatalf("scrape: parse: %v", err)
	}
	list := make([]*dto.MetricFamily, 0, len(fams))
	for _, f := range fams {
		list = append(list, f)
	}
	return viewOf(list)
}

// gathered reads the recorder's registry directly (after Run returned).
func (r *running) gathered(t *testing.T) map[string]*familyView {
	t.Helper()
	fams, err := r.rec.Registry().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	return viewOf(fams)
}

func viewOf(fams []*dto.MetricFamily) map[string]*familyView {
	out := map[string]*familyView{}
	for _, f := range fams {
		fv := &familyView{}
		for _, m := range f.GetMetric() {
			lv := map[string]string{}
			for _, l := range m.GetLabel() {
				lv[l.GetName()] = l.GetValue()
			}
			v := 0.0
			switch {
			case m.Counter != nil:
				v = m.GetCounter().GetValue()
			case m.Gauge != nil:
				v = m.GetGauge().GetValue()
			case m.Untyped != nil:
				v = m.GetUntyped().GetValue()
			case m.Histogram != nil:
				v = float64(m.GetHistogram().GetSampleCount())
			}
			fv.samples = append(fv.samples, sample{lv, v})
		}
		out[f.GetName()] = fv
	}
	return out
}

type sample struct {
	labels map[string]string
	value  float64
}

type familyView struct{ samples []sample }

// sum adds the samples of a family whose labels include every pair of
// want (name, value, name, value, ...); ok is false when none matched.
func sum(fams map[string]*familyView, name string, want ...string) (total float64, ok bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, s := range f.samples {
		for i := 0; i+1 < len(want); i += 2 {
			if s.labels[want[i]] != want[i+1] {
				continue next
			}
		}
		total += s.value
		ok = true
	}
	return total, ok
}

// waitFor is testutil.Eventually under the name this package's tests use:
// it polls cond until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, timeout, what, cond)
}

// seen is one finished record as a test sink saw it.
type seen struct {
	target, class string
	traffic       ledger.Traffic
	outcome       ledger.Outcome
	reason        ledger.Reason
	planned, end  time.Duration
	dispatched    time.Duration
	attempt       int
	traceID       string
	at            time.Time // wall time the record finished
	during        ledger.During
	step          int
}

// recSink keeps every finished record.
type recSink struct {
	mu   sync.Mutex
	recs []seen
}

func (s *recSink) Record(r *ledger.Record) {
	s.mu.Lock()
	s.recs = append(s.recs, seen{r.Target, r.Class, r.Traffic, r.Outcome, r.Reason, r.Planned, r.End, r.Dispatched, r.Attempt, r.TraceID, time.Now(), r.During, r.Step})
	s.mu.Unlock()
}

// where returns the records for which keep holds.
func (s *recSink) where(keep func(seen) bool) []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []seen
	for _, r := range s.recs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// count returns how many records keep accepts.
func (s *recSink) count(keep func(seen) bool) int { return len(s.where(keep)) }
