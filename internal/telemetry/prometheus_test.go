package telemetry

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

var fixedNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

const ms = time.Millisecond

// fixtureRecords is a fixed set of finished records covering every path:
// ok with usage and chunk gaps, ok without usage, an ok outside the TTFT gate,
// a rejection, an unsent arrival, a censored request, a retry attempt and a
// ladder request with a trace id.
func fixtureRecords() []*ledger.Record {
	return []*ledger.Record{
		{ID: 1, Target: "sim", Class: "short", Traffic: ledger.TrafficBaseline, API: "openai-chat", Model: "m1",
			Planned: 100 * ms, Dispatched: 101 * ms, Headers: 150 * ms, FirstContent: 300 * ms, LastContent: 500 * ms, End: 510 * ms,
			ChunkGaps: []time.Duration{20 * ms, 30 * ms, 150 * ms}, Usage: ledger.Usage{Known: true, Prompt: 12, Completion: 5},
			ContentEvents: 4, Outcome: ledger.OK, Reason: ledger.ReasonStop,
			Conn: &ledger.Conn{DNS: 1 * ms, Connect: 2 * ms, TLS: 5 * ms, Got: 110 * ms, Wrote: 111 * ms,
				HTTPVersion: "2", TLSVersion: "1.3", TLSCipher: "TLS_AES_128_GCM_SHA256", ALPN: "h2"}},
		{ID: 2, Target: "sim", Class: "short", Traffic: ledger.TrafficBaseline, API: "openai-chat",
			Planned: 200 * ms, Dispatched: 203 * ms, FirstContent: 1400 * ms, LastContent: 1500 * ms, End: 1600 * ms,
			ChunkGaps: []time.Duration{100 * ms}, ContentEvents: 2, Outcome: ledger.OK, Reason: ledger.ReasonLength},
		{ID: 3, Target: "sim", Class: "short", Traffic: ledger.TrafficBaseline, API: "openai-chat",
			Planned: 300 * ms, Dispatched: 300*ms + 500*time.Microsecond, Headers: 320 * ms, End: 321 * ms, Status: 429,
			Outcome: ledger.Rejected, Reason: ledger.ReasonStatus429},
		{ID: 4, Target: "sim", Class: "short", Traffic: ledger.TrafficBaseline, Planned: 400 * ms,
			Outcome: ledger.Unsent, Reason: ledger.ReasonClientCap},
		{ID: 5, Target: "sim", Class: "short", Traffic: ledger.TrafficBaseline, API: "openai-chat",
			Planned: 500 * ms, Dispatched: 502 * ms, End: 30 * time.Second, Outcome: ledger.Censored, Reason: ledger.ReasonDrainDeadline},
		{ID: 6, Target: "sim", Class: "short", Traffic: ledger.TrafficBaseline, API: "openai-chat", Attempt: 2,
			Planned: 600 * ms, Dispatched: 600 * ms, End: 700 * ms, Outcome: ledger.Timeout, Reason: ledger.ReasonHeaders},
		{ID: 7, Target: "sim", Class: "short", Traffic: ledger.TrafficLadder, API: "openai-chat", Step: 2, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736",
			Planned: 700 * ms, Dispatched: 710 * ms, FirstContent: 800 * ms, LastContent: 900 * ms, End: 950 * ms,
			ChunkGaps: []time.Duration{50 * ms, 50 * ms}, Usage: ledger.Usage{Known: true, Prompt: 3, Completion: 3},
			Outcome: ledger.OK, Reason: ledger.ReasonStop,
			Conn: &ledger.Conn{Reused: true, Got: 711 * ms, Wrote: 712 * ms, HTTPVersion: "2", TLSVersion: "1.3", TLSCipher: "TLS_AES_128_GCM_SHA256", ALPN: "h2"}},
	}
}

func newTestRecorder(t *testing.T, o Options) (*Recorder, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	o.Registerer = reg
	o.Build = BuildInfo{Version: "1.2.3", Revision: "abc", GoVersion: "go1.26"}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return r, reg
}

func feedFixture(r *Recorder) {
	r.SetGates("sim", "short", Gates{TTFT: time.Second})
	r.SetInFlight("sim", 2, 1500*ms)
	r.SetArrivalRate("sim", "short", ledger.TrafficBaseline, 0.2)
	r.SetGeneratorValid("sim", verdict.Validity{Valid: true}, 3*ms)
	r.SetCapacity("sim", "short", 4, ladderresult.BoundMeasured, 6)
	r.SetLadderIdentity("sim", "m1", "v1", true)
	r.SetLadderSteps("sim", "short", fixedNow, []LadderStep{
		{Step: 1, OfferedRate: 2, TTFTP95: 250 * ms, Goodput: 2},
		{Step: 2, OfferedRate: 4, TTFTP95: 400 * ms, Goodput: 3.9},
	})
	r.SetBudget("sim", 100000, -1)
	r.SetTargetInfo("sim", "m1", "")
	feedPath(r)
	for _, rec := range fixtureRecords() {
		r.Record(rec)
	}
	// The per-turn series alone (Record's path to them: TestSessionTurnSeries).
	for _, rec := range sessionFixture() {
		r.prom.recordTurn(rec.Target, rec.Class, rec, r.drop)
	}
	// The answer checks' series alone (Record's path to them:
	// TestAnswerChecks).
	r.InitChecks("sim", "canary", []answercheck.Check{{Name: "add", Expect: &answercheck.Expect{}}, {Name: "schema", JSON: &answercheck.JSONCheck{}}})
	for _, rec := range checkFixture() {
		r.prom.recordCheck(rec.Target, rec.Class, rec, r.drop)
		if r.otel != nil {
			r.otel.recordCheck(rec)
		}
	}
}

// sessionFixture is a session of three turns whose second failed.
func sessionFixture() []*ledger.Record {
	base := ledger.Record{Target: "sim", Class: "chat", Traffic: ledger.TrafficBaseline, Mode: ledger.ModeOpen, Session: 41}
	t1, t2, t3 := base, base, base
	t1.ID, t1.Turn, t1.Planned, t1.Dispatched, t1.FirstContent, t1.End, t1.Outcome, t1.Reason = 41, 1, 10*ms, 11*ms, 300*ms, 400*ms, ledger.OK, ledger.ReasonStop
	t2.ID, t2.Turn, t2.Planned, t2.Dispatched, t2.End, t2.Outcome, t2.Reason = 42, 2, 900*ms, 901*ms, 950*ms, ledger.HTTPError, ledger.ReasonServerError
	t3.ID, t3.Turn, t3.Planned, t3.Outcome, t3.Reason = 43, 3, 950*ms, ledger.Unsent, ledger.ReasonSessionAborted
	return []*ledger.Record{&t1, &t2, &t3}
}

var exemplarRE = regexp.MustCompile(`# \{([^}]*)\} (\S+) \S+$`)

// normaliseExemplars sorts each exemplar's labels (their order is not
// fixed) and replaces its timestamp, the one value that varies.
func normaliseExemplars(b []byte) []byte {
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		m := exemplarRE.FindStringSubmatchIndex(l)
		if m == nil {
			continue
		}
		labels := strings.Split(l[m[2]:m[3]], ",")
		sort.Strings(labels)
		lines[i] = l[:m[0]] + "# {" + strings.Join(labels, ",") + "} " + l[m[4]:m[5]] + " TS"
	}
	return []byte(strings.Join(lines, "\n"))
}

// exposition renders the registry in OpenMetrics (with exemplars) and
// normalises the exemplar timestamps, the one thing that varies.
func exposition(t *testing.T, g prometheus.Gatherer) []byte {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeOpenMetrics))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	if c, ok := enc.(expfmt.Closer); ok {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return normaliseExemplars(buf.Bytes())
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(run go test -update after checking the change)", name, i+1, g, w)
			}
		}
	}
}

func TestGoldenExposition(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	feedFixture(r)
	golden(t, "exposition.om.txt", exposition(t, reg))
}

func TestLint(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	feedFixture(r)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	// The default registry with Go and process collectors must lint too.
	full, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testutil.GatherAndLint(full.Registry()); err != nil {
		t.Fatal(err)
	}
}

func family(t *testing.T, g prometheus.Gatherer, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	t.Fatalf("no family %s", name)
	return nil
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// TestHistogramsAreNative: every latency histogram has native buckets, and
// classic buckets beside them only when Options.ClassicHistograms asks
// (else the +Inf bucket alone, which carries the exemplar).
func TestHistogramsAreNative(t *testing.T) {
	classicBounds := map[string]int{
		"llmprobe_time_to_first_token_seconds": len(bucketsTTFT), "llmprobe_inter_chunk_latency_seconds": len(bucketsChunk),
		"llmprobe_time_per_output_token_seconds": len(bucketsChunk), "llmprobe_request_duration_seconds": len(bucketsDuration),
		"llmprobe_dispatch_lag_seconds": len(bucketsLag),
	}
	for _, classic := range []bool{false, true} {
		r, reg := newTestRecorder(t, Options{ClassicHistograms: classic})
		feedFixture(r)
		for name, bounds := range classicBounds {
			for _, m := range family(t, reg, name).GetMetric() {
				if labelsOf(m)["traffic"] != "baseline" {
					continue
				}
				h := m.GetHistogram()
				finite := 0
				for _, b := range h.GetBucket() {
					if !math.IsInf(b.GetUpperBound(), 1) {
						finite++
					}
				}
				if want := map[bool]int{false: 0, true: bounds}[classic]; finite != want {
					t.Errorf("classic=%v: %s has %d classic buckets, want %d", classic, name, finite, want)
				}
				if h.Schema == nil || h.GetSchema() != 3 { // factor 1.1 → schema 3 (2^(2^-3) ≈ 1.09)
					t.Errorf("classic=%v: %s native schema = %v, want 3", classic, name, h.Schema)
				}
				if h.GetSampleCount() > 0 && len(h.GetPositiveSpan()) == 0 {
					t.Errorf("classic=%v: %s has samples but no native spans", classic, name)
				}
			}
		}
	}
}

// TestCountsFollowTheRecords checks the boundaries: success latencies from ok
// only, failures in counts, planned counts first attempts, tokens only from
// usage, good needs the gate.
func TestCountsFollowTheRecords(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	feedFixture(r)
	base := []string{"sim", "short", "baseline", "none"}
	tests := []struct {
		name string
		c    prometheus.Collector
		want float64
	}{
		{"planned excludes retry attempts", r.prom.planned.WithLabelValues(base...), 5},
		{"dispatched", r.prom.dispatched.WithLabelValues(base...), 5},
		{"good needs TTFT <= 1s", r.prom.good.WithLabelValues(base...), 1},
		{"ladder good", r.prom.good.WithLabelValues("sim", "short", "ladder", "ladder"), 1},
		{"rejected counted", r.prom.requests.WithLabelValues("sim", "short", "baseline", "none", "rejected", "status_429"), 1},
		{"censored counted", r.prom.requests.WithLabelValues("sim", "short", "baseline", "none", "censored", "drain_deadline"), 1},
		{"an outcome pre-initialised at its first reason", r.prom.requests.WithLabelValues("sim", "short", "baseline", "none", "stream_error", "in_band_error"), 0},
		{"input tokens from usage only", r.prom.tokens.WithLabelValues("sim", "short", "baseline", "none", "input"), 12},
		{"output tokens", r.prom.tokens.WithLabelValues("sim", "short", "baseline", "none", "output"), 5},
	}
	for _, tc := range tests {
		if got := testutil.ToFloat64(tc.c); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	// One series per outcome for each (traffic, during) seen, and one for
	// each other (outcome, reason) pair a record brought.
	seen := map[string]bool{}
	for _, rec := range fixtureRecords() {
		seen[string(rec.Traffic)+"/"+rec.DuringLabel()] = true
	}
	want := len(seen) * len(ledger.Outcomes)
	extra := map[string]bool{}
	for _, rec := range fixtureRecords() {
		if !slices.Contains(initialReasons(), reqKey{rec.Outcome, rec.Reason}) {
			extra[string(rec.Traffic)+"/"+rec.DuringLabel()+"/"+string(rec.Outcome)+"/"+string(rec.Reason)] = true
		}
	}
	want += len(extra)
	if n := testutil.CollectAndCount(r.prom.requests); n != want {
		t.Errorf("requests_total series = %d, want %d (%d series × %d outcomes, %d other pairs recorded)", n, want, len(seen), len(ledger.Outcomes), len(extra))
	}
	// Success latencies: only the two baseline ok records.
	for name, want := range map[string]uint64{
		"llmprobe_time_to_first_token_seconds": 2, "llmprobe_request_duration_seconds": 2,
		"llmprobe_inter_chunk_latency_seconds": 4, "llmprobe_time_per_output_token_seconds": 1,
		"llmprobe_dispatch_lag_seconds": 5,
	} {
		for _, m := range family(t, reg, name).GetMetric() {
			if labelsOf(m)["traffic"] == "baseline" && m.GetHistogram().GetSampleCount() != want {
				t.Errorf("%s baseline count = %d, want %d", name, m.GetHistogram().GetSampleCount(), want)
			}
		}
	}
	// TTFT from the planned time: record 1 is 300-100 = 200ms, record 2 is 1.2s.
	for _, m := range family(t, reg, "llmprobe_time_to_first_token_seconds").GetMetric() {
		if labelsOf(m)["traffic"] == "baseline" {
			if got := m.GetHistogram().GetSampleSum(); got < 1.3999 || got > 1.4001 {
				t.Errorf("TTFT sum = %v, want 1.4", got)
			}
		}
	}
}

func TestExemplarsCarryRequestAndTraceID(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	feedFixture(r)
	found := false
	for _, m := range family(t, reg, "llmprobe_time_to_first_token_seconds").GetMetric() {
		if labelsOf(m)["traffic"] != "ladder" {
			continue
		}
		for _, ex := range m.GetHistogram().GetExemplars() {
			l := map[string]string{}
			for _, p := range ex.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["request_id"] == "7" && l["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736" {
				found = true
			}
		}
	}
	if !found {
		t.Error("no native exemplar with request_id 7 and its trace_id on the ladder TTFT histogram")
	}
}

// TestExemplarsKept: each latency histogram of a response keeps at most
// Options.Exemplars exemplars (DefaultExemplars when 0, none when
// negative, and then no classic bucket carries one either); the dispatch
// lag, the prober's own lateness, keeps none.
func TestExemplarsKept(t *testing.T) {
	for _, tc := range []struct {
		option, want int
	}{{0, DefaultExemplars}, {2, 2}, {12, 12}, {-1, 0}} {
		r, reg := newTestRecorder(t, Options{Exemplars: tc.option, ClassicHistograms: true})
		for i := range 40 {
			r.Record(&ledger.Record{ID: uint64(i + 1), Target: "sim", Class: "c", Traffic: ledger.TrafficBaseline, API: "openai-chat",
				Planned: ms, Dispatched: time.Duration(2+i) * ms, FirstContent: time.Duration(50+10*i) * ms,
				LastContent: time.Duration(100+10*i) * ms, End: time.Duration(101+10*i) * ms,
				ChunkGaps: []time.Duration{time.Duration(10+i) * ms}, ContentEvents: 2, Usage: ledger.Usage{Known: true, Prompt: 10, Completion: 5}, Outcome: ledger.OK, Reason: ledger.ReasonStop})
		}
		for _, name := range []string{"llmprobe_time_to_first_token_seconds", "llmprobe_request_duration_seconds",
			"llmprobe_inter_chunk_latency_seconds", "llmprobe_time_per_output_token_seconds", "llmprobe_dispatch_lag_seconds"} {
			want := tc.want
			if name == "llmprobe_dispatch_lag_seconds" {
				want = 0
			}
			h := family(t, reg, name).GetMetric()[0].GetHistogram()
			if h.GetSampleCount() != 40 {
				t.Fatalf("Exemplars %d: %s counted %d, want 40", tc.option, name, h.GetSampleCount())
			}
			if got := len(h.GetExemplars()); got != want {
				t.Errorf("Exemplars %d: %s keeps %d native exemplars, want %d", tc.option, name, got, want)
			}
			classic := 0
			for _, b := range h.GetBucket() {
				if b.GetExemplar() != nil {
					classic++
				}
			}
			if (classic > 0) != (want > 0) {
				t.Errorf("Exemplars %d: %s has %d classic buckets with an exemplar, want some: %v", tc.option, name, classic, want > 0)
			}
		}
	}
}

// TestGeneratorVerdictSeries: the verdict's causes are a closed set of
// 0/1 series beside llmprobe_generator_valid.
func TestGeneratorVerdictSeries(t *testing.T) {
	r, _ := newTestRecorder(t, Options{})
	v := verdict.ValidityConfig{}.Judge(verdict.Evidence{LagCount: 10, LagOver: 5, LagP99: 30 * ms, ClientCap: 2,
		Host: verdict.HostHealth{Known: true, SchedCount: 10, SchedP99: 14 * ms}})
	r.SetGeneratorValid("a", v, 40*ms)
	if got := testutil.ToFloat64(r.prom.generatorValid.WithLabelValues("a")); got != 0 {
		t.Errorf("generator_valid %v, want 0", got)
	}
	want := map[cause.Cause]float64{cause.HostStarved: 1, cause.InFlightCap: 1}
	for _, c := range cause.Generator {
		if got := testutil.ToFloat64(r.prom.invalidCause.WithLabelValues("a", string(c))); got != want[c] {
			t.Errorf("cause %s = %v, want %v", c, got, want[c])
		}
	}
	if got := testutil.ToFloat64(r.prom.lagMax.WithLabelValues("a")); got != 0.04 {
		t.Errorf("lag max %v, want 0.04", got)
	}
	r.SetGeneratorValid("a", verdict.Validity{Valid: true}, 0)
	for _, c := range cause.Generator {
		if got := testutil.ToFloat64(r.prom.invalidCause.WithLabelValues("a", string(c))); got != 0 {
			t.Errorf("valid again, yet cause %s = %v", c, got)
		}
	}
	if n := testutil.CollectAndCount(r.prom.invalidCause); n != len(cause.Generator) {
		t.Errorf("%d cause series, want %d", n, len(cause.Generator))
	}
}

// TestCapacityBoundLabel: one capacity series per class, labelled with what
// it is; a new ladder's bound replaces the old series.
func TestCapacityBoundLabel(t *testing.T) {
	r, _ := newTestRecorder(t, Options{})
	r.SetCapacity("a", "chat", 8, ladderresult.BoundLower, -1)
	r.SetCapacity("a", "long", 2, ladderresult.BoundMeasured, 4)
	if got := testutil.ToFloat64(r.prom.capacity.WithLabelValues("a", "chat", "lower", ScopeLocal)); got != 8 {
		t.Errorf("lower bound %v, want 8", got)
	}
	r.SetCapacity("a", "chat", 6, ladderresult.BoundMeasured, 3)
	if n := testutil.CollectAndCount(r.prom.capacity); n != 2 {
		t.Errorf("%d capacity series, want 2 (one per class)", n)
	}
	if got := testutil.ToFloat64(r.prom.capacity.WithLabelValues("a", "chat", "measured", ScopeLocal)); got != 6 {
		t.Errorf("measured %v, want 6", got)
	}
	r.SetCapacity("a", "chat", -1, ladderresult.BoundMeasured, -1)
	if n := testutil.CollectAndCount(r.prom.capacity); n != 1 {
		t.Errorf("%d capacity series after no capacity for chat, want 1", n)
	}
}

func TestTargetIdentityChanges(t *testing.T) {
	r, _ := newTestRecorder(t, Options{})
	steps := []struct {
		model, version string
		changed        bool
		changes        float64
	}{
		{"m1", "", false, 0},
		{"m1", "", false, 0},
		{"", "", false, 0}, // a response naming no model says nothing
		{"m2", "", true, 1},
		{"m2", "v7", true, 2},
	}
	for i, s := range steps {
		if got := r.SetTargetInfo("a", s.model, s.version); got != s.changed {
			t.Errorf("step %d: changed = %v, want %v", i, got, s.changed)
		}
		if got := testutil.ToFloat64(r.prom.identityChanges.WithLabelValues("a")); got != s.changes {
			t.Errorf("step %d: changes = %v, want %v", i, got, s.changes)
		}
		if n := testutil.CollectAndCount(r.prom.targetInfo); n != 1 {
			t.Errorf("step %d: %d target_info series, want 1", i, n)
		}
	}
}

func TestLadderStepsReplaceAndForgetTarget(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	feedFixture(r)
	r.SetLadderSteps("sim", "short", fixedNow, []LadderStep{{Step: 1, OfferedRate: 1, Goodput: 1}})
	if n := testutil.CollectAndCount(r.prom.stepRate); n != 1 {
		t.Errorf("step series after replace = %d, want 1", n)
	}
	if n := testutil.CollectAndCount(r.prom.stepTTFT); n != 0 {
		t.Errorf("a step without TTFT p95 kept a series")
	}
	r.SetCapacity("sim", "short", -1, ladderresult.BoundMeasured, -1)
	if n := testutil.CollectAndCount(r.prom.capacity); n != 0 {
		t.Errorf("capacity not removed")
	}
	r.ForgetTarget("sim")
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if labelsOf(m)["target"] == "sim" {
				t.Errorf("%s still has a series for a forgotten target", mf.GetName())
			}
		}
	}
}

// TestRegistryHasSchedulerLatency: the registry exports the Go scheduler
// latency histogram (and process CPU), the prober host's own health.
func TestRegistryHasSchedulerLatency(t *testing.T) {
	mfs, err := NewRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() == "go_sched_latencies_seconds" && mf.GetType() == dto.MetricType_HISTOGRAM {
			found[mf.GetName()] = true
		}
		if mf.GetName() == "process_cpu_seconds_total" {
			found[mf.GetName()] = true
		}
	}
	if !found["go_sched_latencies_seconds"] {
		t.Error("no go_sched_latencies_seconds histogram")
	}
	if !found["process_cpu_seconds_total"] && runtime.GOOS == "linux" {
		t.Error("no process_cpu_seconds_total")
	}
}

// TestDuringLabel: baseline requests planned while a ladder ran are counted
// apart (during="ladder"), the label's value set is fixed and always
// present, and InitSeries creates exactly the (traffic, during) pairs that
// can occur.
func TestDuringLabel(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	r.SetGates("sim", "short", Gates{TTFT: 500 * ms})
	r.InitSeries("sim", "short", ledger.TrafficBaseline, ledger.TrafficLadder)
	pairs := map[string]bool{}
	for _, m := range family(t, reg, "llmprobe_requests_planned_total").GetMetric() {
		l := labelsOf(m)
		pairs[l["traffic"]+"/"+l["during"]] = true
	}
	if want := map[string]bool{"baseline/none": true, "baseline/ladder": true, "ladder/ladder": true}; len(pairs) != len(want) ||
		!pairs["baseline/none"] || !pairs["baseline/ladder"] || !pairs["ladder/ladder"] {
		t.Fatalf("initialised (traffic/during) pairs %v, want %v", pairs, want)
	}
	ok := func(id uint64, during ledger.During, ttft time.Duration) *ledger.Record {
		return &ledger.Record{ID: id, Target: "sim", Class: "short", Traffic: ledger.TrafficBaseline, During: during, API: "openai-chat",
			Planned: ms, Dispatched: 2 * ms, FirstContent: ms + ttft, LastContent: 2*ms + ttft, End: 3*ms + ttft,
			ContentEvents: 2, Outcome: ledger.OK, Reason: ledger.ReasonStop}
	}
	r.Record(ok(1, "", 100*ms))                   // the service, unhurt
	r.Record(ok(2, ledger.DuringLadder, 3000*ms)) // queued behind the ladder's own load
	r.Record(ok(3, ledger.DuringLadder, 200*ms))
	for _, tc := range []struct {
		during        string
		planned, good float64
		ttft          uint64
	}{{"none", 1, 1, 1}, {"ladder", 2, 1, 2}} {
		if got := testutil.ToFloat64(r.prom.planned.WithLabelValues("sim", "short", "baseline", tc.during)); got != tc.planned {
			t.Errorf("planned{during=%q} = %v, want %v", tc.during, got, tc.planned)
		}
		if got := testutil.ToFloat64(r.prom.good.WithLabelValues("sim", "short", "baseline", tc.during)); got != tc.good {
			t.Errorf("good{during=%q} = %v, want %v", tc.during, got, tc.good)
		}
	}
	for _, m := range family(t, reg, "llmprobe_time_to_first_token_seconds").GetMetric() {
		l := labelsOf(m)
		if l["during"] == "" {
			t.Errorf("TTFT series without a during label: %v", l)
		}
		if l["traffic"] != "baseline" {
			continue
		}
		want := map[string]uint64{"none": 1, "ladder": 2}[l["during"]]
		if got := m.GetHistogram().GetSampleCount(); got != want {
			t.Errorf("TTFT{during=%q} count %d, want %d", l["during"], got, want)
		}
	}
	// No value outside the closed set, whatever was recorded.
	for _, name := range []string{"llmprobe_requests_total", "llmprobe_requests_good_total", "llmprobe_tokens_total", "llmprobe_dispatch_lag_seconds"} {
		for _, m := range family(t, reg, name).GetMetric() {
			if d := labelsOf(m)["during"]; d != "none" && d != "ladder" {
				t.Errorf("%s: during=%q outside {none, ladder}", name, d)
			}
		}
	}
}

// TestInitSeriesOnlyWhatCanHappen: InitSeries creates the (traffic,
// during) pairs the traffic kinds given can produce and no others (no
// ladder series for a target without a ladder), each with one
// llmprobe_requests_total series per outcome.
func TestInitSeriesOnlyWhatCanHappen(t *testing.T) {
	for _, tc := range []struct {
		traffic []ledger.Traffic
		want    []string
	}{
		{[]ledger.Traffic{ledger.TrafficBaseline}, []string{"baseline/none"}},
		{[]ledger.Traffic{ledger.TrafficBaseline, ledger.TrafficLadder}, []string{"baseline/ladder", "baseline/none", "ladder/ladder"}},
		{[]ledger.Traffic{ledger.TrafficProbe}, []string{"probe/none"}},
	} {
		r, reg := newTestRecorder(t, Options{})
		r.InitSeries("sim", "short", tc.traffic...)
		var pairs []string
		for _, m := range family(t, reg, "llmprobe_requests_planned_total").GetMetric() {
			l := labelsOf(m)
			pairs = append(pairs, l["traffic"]+"/"+l["during"])
		}
		slices.Sort(pairs)
		if !slices.Equal(pairs, tc.want) {
			t.Errorf("InitSeries(%v): (traffic/during) pairs %v, want %v", tc.traffic, pairs, tc.want)
		}
		outcomes := map[string]map[string]bool{}
		for _, m := range family(t, reg, "llmprobe_requests_total").GetMetric() {
			l := labelsOf(m)
			p := l["traffic"] + "/" + l["during"]
			if outcomes[p] == nil {
				outcomes[p] = map[string]bool{}
			}
			if outcomes[p][l["outcome"]] {
				t.Errorf("InitSeries(%v): %s has two series of outcome %s", tc.traffic, p, l["outcome"])
			}
			outcomes[p][l["outcome"]] = true
		}
		for _, p := range tc.want {
			if len(outcomes[p]) != len(ledger.Outcomes) {
				t.Errorf("InitSeries(%v): %s has %d outcomes initialised, want %d", tc.traffic, p, len(outcomes[p]), len(ledger.Outcomes))
			}
		}
	}
}

// TestReasonCreatedOnFirstOccurrence: a reason outside the initial set
// gets its series when first recorded, counted from that record on.
func TestReasonCreatedOnFirstOccurrence(t *testing.T) {
	r, _ := newTestRecorder(t, Options{})
	r.InitSeries("sim", "short", ledger.TrafficBaseline)
	idle := func() float64 {
		return testutil.ToFloat64(r.prom.requests.WithLabelValues("sim", "short", "baseline", "none", "timeout", "idle"))
	}
	n := testutil.CollectAndCount(r.prom.requests)
	rec := &ledger.Record{ID: 1, Target: "sim", Class: "short", Traffic: ledger.TrafficBaseline, Planned: ms, Dispatched: 2 * ms, End: 3 * ms,
		Outcome: ledger.Timeout, Reason: ledger.ReasonIdle}
	r.Record(rec)
	if got := testutil.CollectAndCount(r.prom.requests); got != n+1 {
		t.Errorf("after a first timeout/idle: %d requests_total series, want %d", got, n+1)
	}
	r.Record(rec)
	if got := idle(); got != 2 {
		t.Errorf("timeout/idle = %v, want 2", got)
	}
}

// TestLadderIdentityOneSeries: the ladder identity info is one series per
// target, replaced by the next ladder, its values cleaned.
func TestLadderIdentityOneSeries(t *testing.T) {
	r, _ := newTestRecorder(t, Options{})
	r.SetLadderIdentity("sim", "m1", "v1", true)
	r.SetLadderIdentity("sim", "m1", "v2\x1b[31m", false)
	if n := testutil.CollectAndCount(r.prom.ladderIdentity); n != 1 {
		t.Fatalf("%d series, want 1", n)
	}
	if v := testutil.ToFloat64(r.prom.ladderIdentity.WithLabelValues("sim", "m1", sanitize.String("v2\x1b[31m", maxLabelBytes), "false", ScopeLocal)); v != 1 {
		t.Errorf("identity series %g, want 1 for the partial v2 ladder", v)
	}
}
