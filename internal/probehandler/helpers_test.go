package probehandler

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/testutil"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is a /probe endpoint under test: a real ledger and group, the
// collector among the ledger's sinks beside a sink that keeps every
// record, and the handler served over real HTTP on 127.0.0.1.
type env struct {
	h     *Handler
	url   string // the endpoint's base URL
	led   *ledger.Ledger
	group *dispatch.Group
	col   *Collector
	reg   *prometheus.Registry // where the handler registers its own counters

	mu   sync.Mutex
	cfg  *config.Config
	recs []ledger.Record // every record the ledger ended, in order
}

// newEnv loads yaml (targets and probe keys) through wiring, as the daemon
// does, and serves its /probe. Configured targets are looked up in the
// loaded configuration and sent to through clients built by wiring.
func newEnv(t *testing.T, yaml string) *env {
	t.Helper()
	cfg, err := wiring.Load(config.Options{BuiltIn: []byte(yaml), Environ: func() []string { return nil }})
	if err != nil {
		t.Fatalf("config: %v\n%s", err, yaml)
	}
	e := &env{cfg: cfg, col: NewCollector(), reg: prometheus.NewRegistry()}
	// The test's sink comes first: the ledger feeds its sinks in order, and
	// the handler answers once the collector has the record, so a record
	// is in e.recs before the response leaves (it once came after, and a
	// test that read it at once found none).
	e.led = ledger.New(time.Now(), ledger.SinkFunc(func(r *ledger.Record) {
		e.mu.Lock()
		e.recs = append(e.recs, *r)
		e.mu.Unlock()
	}), e.col)
	e.group = dispatch.NewGroup(e.led)
	clients := map[string]Configured{}
	for i, tg := range cfg.Targets {
		c, target, err := wiring.Client(tg, wiring.ClientOptions{})
		if err != nil {
			t.Fatalf("targets[%d]: %v", i, err)
		}
		t.Cleanup(c.CloseIdleConnections)
		clients[tg.Name] = Configured{Target: tg, Exec: func(p func(*ledger.Record) protocol.Params) dispatch.Exec {
			return c.Exec(target, p, e.led.Now)
		}}
	}
	e.h, err = New(Options{Config: e.config, Group: e.group, Collector: e.col,
		Targets: func(n string) (Configured, bool) { c, ok := clients[n]; return c, ok }, Registerer: e.reg})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.h)
	e.url = srv.URL
	t.Cleanup(func() {
		srv.Close()
		e.group.Drain(t.Context(), time.Second)
		if err := e.led.Verify(); err != nil {
			t.Errorf("ledger: %v", err)
		}
		if n := e.col.pending(); n != 0 {
			t.Errorf("the collector still holds %d records", n)
		}
	})
	return e
}

func (e *env) config() *config.Config {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cfg
}

func (e *env) records() []ledger.Record {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]ledger.Record(nil), e.recs...)
}

// fetch requests /probe with the query and headers given (name, value,
// …); safe from any goroutine.
func (e *env) fetch(query string, hdr ...string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, e.url+"/probe?"+query, nil)
	if err != nil {
		return 0, "", err
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("GET /probe?%s: %w", query, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// get is fetch from the test's goroutine: an error fails the test.
func (e *env) get(t *testing.T, query string, hdr ...string) (int, string) {
	t.Helper()
	code, body, err := e.fetch(query, hdr...)
	if err != nil {
		t.Fatal(err)
	}
	return code, body
}

// parse reads an answer (text exposition); safe from any goroutine.
func parse(code int, body string) (map[string]*dto.MetricFamily, error) {
	if code != http.StatusOK {
		return nil, fmt.Errorf("status %d: %s", code, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bufio.NewReader(strings.NewReader(body)))
	if err != nil {
		return nil, fmt.Errorf("parse: %w\n%s", err, body)
	}
	return fams, nil
}

// metrics requests /probe and parses the answer.
func (e *env) metrics(t *testing.T, query string, hdr ...string) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := parse(e.get(t, query, hdr...))
	if err != nil {
		t.Fatalf("GET /probe?%s: %v", query, err)
	}
	return fams
}

// value is the value of the one sample of a gauge family whose labels
// include want (name, value, …); ok false when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		lv := map[string]string{}
		for _, l := range m.GetLabel() {
			lv[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(want); i += 2 {
			if lv[want[i]] != want[i+1] {
				continue next
			}
		}
		return m.GetGauge().GetValue(), true
	}
	return 0, false
}

// must is value that fails the test when the sample is absent.
func must(t *testing.T, fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	t.Helper()
	v, ok := value(fams, name, want...)
	if !ok {
		t.Fatalf("no %s%v in the answer", name, want)
	}
	return v
}

// outcomes sums probe_llm_outcome by outcome (only non-zero entries).
func outcomes(fams map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, m := range fams[mOutcome].GetMetric() {
		if v := m.GetGauge().GetValue(); v != 0 {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					out[l.GetValue()] += v
				}
			}
		}
	}
	return out
}

// modYAML is a probe section: allowed prefixes and module entries (each
// a YAML flow mapping, by name).
func modYAML(allowed []string, modules ...string) string {
	var b strings.Builder
	b.WriteString("probe:\n  allowed_targets: [")
	for i, a := range allowed {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", a)
	}
	b.WriteString("]\n  modules:\n")
	for i := 0; i+1 < len(modules); i += 2 {
		fmt.Fprintf(&b, "    %s: %s\n", modules[i], modules[i+1])
	}
	return b.String()
}

// targetsYAML is a targets section with one target per name/url pair.
func targetsYAML(pairs ...string) string {
	var b strings.Builder
	b.WriteString("targets:\n")
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(&b, "  - {name: %s, url: %q, model: llmprobe-sim, baseline: {enabled: false}}\n", pairs[i], pairs[i+1])
	}
	return b.String()
}

// startSim is the simulator on 127.0.0.1, fast, with no rejections.
func startSim(t *testing.T) string {
	return testutil.StartSim(t, fastSim())
}

// fastSim is the simulator's default with short streams: a first token
// after ~20 ms, 8 to 16 tokens 2 ms apart.
func fastSim() sim.Config {
	c := sim.DefaultConfig()
	c.TTFT = sim.FixedDist(0.020)
	c.TokenTime = sim.FixedDist(0.002)
	c.OutputTokens = sim.UniformDist(8, 16)
	c.Seed = 7
	return c
}

// serveSim is the simulator with cfg on 127.0.0.1; it returns its base URL.
func serveSim(t *testing.T, cfg sim.Config) (*sim.Server, string) {
	return testutil.ServeSim(t, cfg)
}

// httpServer serves h on 127.0.0.1 until the test ends; it returns its URL.
func httpServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
