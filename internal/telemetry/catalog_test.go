package telemetry

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// TestCatalogMatchesCollectors gathers a Recorder with every series set and
// a ledger sink collector, and holds every llmprobe_* family to its catalog
// entry: present, same type, same help, same label names; and no family
// outside the catalog.
func TestCatalogMatchesCollectors(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	feedFixture(r)
	r.SetBudget("other", 10, 10) // the fixture leaves the request budget unlimited (absent)
	if err := WatchLedgerSink(reg, &fakeSinkStats{Written: 1}); err != nil {
		t.Fatal(err)
	}
	if err := WatchHost(reg, func() HostCounters { return allHostCounters }); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(NewProbeRefused()); err != nil {
		t.Fatal(err)
	}
	if _, err := NewConfigReload(reg, ""); err != nil {
		t.Fatal(err)
	}
	if err := WatchLadderTurns(reg, "", func() LadderTurns { return LadderTurns{Running: 1, Waiting: 2} }); err != nil {
		t.Fatal(err)
	}
	tf, err := NewTargetFiles(reg, "")
	if err != nil {
		t.Fatal(err)
	}
	tf.Set(map[string]map[string]string{"a": {"team": "x"}}, 1) // label names beside target are the configuration's
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "llmprobe_") {
			got[mf.GetName()] = mf
		}
	}
	kinds := map[MetricKind]dto.MetricType{KindCounter: dto.MetricType_COUNTER, KindGauge: dto.MetricType_GAUGE, KindHistogram: dto.MetricType_HISTOGRAM, KindNativeHistogram: dto.MetricType_HISTOGRAM}
	catalog := map[string]bool{}
	for _, m := range Metrics() {
		catalog[m.Name] = true
		mf, ok := got[m.Name]
		if !ok {
			t.Errorf("%s is in the catalog but not exported", m.Name)
			continue
		}
		if want := kinds[m.Kind]; mf.GetType() != want {
			t.Errorf("%s: type %v, catalog says %s", m.Name, mf.GetType(), m.Kind)
		}
		if mf.GetHelp() != m.Help {
			t.Errorf("%s: help %q, catalog says %q", m.Name, mf.GetHelp(), m.Help)
		}
		want := slices.Sorted(slices.Values(m.Labels))
		for _, s := range mf.GetMetric() {
			var names []string
			for _, l := range s.GetLabel() {
				names = append(names, l.GetName())
			}
			slices.Sort(names)
			if m.Name == metricTargetLabels {
				names = slices.DeleteFunc(names, func(n string) bool { return n == "team" }) // the configuration's
			}
			if !slices.Equal(names, want) {
				t.Errorf("%s: series labels %v, catalog says %v", m.Name, names, want)
				break
			}
		}
	}
	for name := range got {
		if !catalog[name] {
			t.Errorf("%s is exported but not in the catalog", name)
		}
	}
}

// TestCatalogNamesCarryTheirUnit holds every name to the Prometheus naming
// rules the catalog's unit implies, so that a rate is named as one.
func TestCatalogNamesCarryTheirUnit(t *testing.T) {
	documented := map[string]bool{}
	for _, l := range Labels() {
		if documented[l.Name] {
			t.Errorf("label %s documented twice", l.Name)
		}
		documented[l.Name] = true
		if l.Meaning == "" {
			t.Errorf("label %s has no meaning", l.Name)
		}
	}
	used := map[string]bool{"region": true}
	seen := map[string]bool{}
	for _, m := range Metrics() {
		if seen[m.Name] {
			t.Errorf("%s listed twice", m.Name)
		}
		seen[m.Name] = true
		if !strings.HasPrefix(m.Name, "llmprobe_") {
			t.Errorf("%s: not in the llmprobe_ namespace", m.Name)
		}
		if m.Help == "" {
			t.Errorf("%s: no help", m.Name)
		}
		if counter := strings.HasSuffix(m.Name, "_total"); counter != (m.Kind == KindCounter) {
			t.Errorf("%s: a %s named with _total=%v", m.Name, m.Kind, counter)
		}
		base := strings.TrimSuffix(m.Name, "_total")
		for _, rule := range []struct {
			unit, suffix string
		}{
			{unitSeconds, "_seconds"},
			{unitTimestamp, "_timestamp_seconds"},
			{unitRate, "_requests_per_second"},
		} {
			if m.Unit == rule.unit && !strings.HasSuffix(base, rule.suffix) {
				t.Errorf("%s: unit %q but the name does not end in %s", m.Name, m.Unit, rule.suffix)
			}
		}
		if strings.HasSuffix(base, "_requests_per_second") && m.Unit != unitRate {
			t.Errorf("%s: named a rate, unit %q", m.Name, m.Unit)
		}
		if strings.HasSuffix(base, "_seconds") && m.Unit != unitSeconds && m.Unit != unitTimestamp {
			t.Errorf("%s: named in seconds, unit %q", m.Name, m.Unit)
		}
		for _, l := range m.Labels {
			used[l] = true
			if !documented[l] {
				t.Errorf("%s: label %s is not in Labels()", m.Name, l)
			}
		}
	}
	for l := range documented {
		if !used[l] {
			t.Errorf("label %s is documented but no metric has it", l)
		}
	}
}

// TestCatalogOTelInstrumentsExist checks that every OTel instrument the
// catalog names is one the Recorder really exports.
func TestCatalogOTelInstrumentsExist(t *testing.T) {
	ms := collectManual(t)
	for _, m := range Metrics() {
		if m.OTel == "" {
			continue
		}
		if _, ok := ms[m.OTel]; !ok {
			t.Errorf("%s: OTel instrument %s is not exported; have %v", m.Name, m.OTel, keys(ms))
		}
	}
}

// metricsDocPath is the generated reference, from this package's directory.
var metricsDocPath = filepath.Join("..", "..", "docs", "metrics.md")

// TestMetricsDoc keeps docs/metrics.md equal to what the catalog says
// (go test ./internal/telemetry -run TestMetricsDoc -update rewrites it).
func TestMetricsDoc(t *testing.T) {
	got := metricsDoc()
	if *update {
		if err := os.WriteFile(metricsDocPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(metricsDocPath)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/telemetry -run TestMetricsDoc -update)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("docs/metrics.md is stale at line %d:\n file: %s\n want: %s\n(run go test ./internal/telemetry -run TestMetricsDoc -update)", i+1, w, g)
			}
		}
	}
}

// cell makes s safe inside a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

func codeList(xs []string) string {
	if len(xs) == 0 {
		return "–"
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "`" + x + "`"
	}
	return strings.Join(out, ", ")
}

func metricsDoc() []byte {
	var b bytes.Buffer
	b.WriteString(`# Metrics reference

<!-- Generated from internal/telemetry/catalog.go by
     go test ./internal/telemetry -run TestMetricsDoc -update
     Do not edit by hand: TestMetricsDoc fails when this file differs. -->

Every ` + "`llmprobe_*`" + ` Prometheus metric llmprobe exports on ` + "`/metrics`" + `, from the
telemetry package's catalog, the one place a metric's name, type, unit, labels and help are
written. Latencies are measured from the planned send time (no coordinated omission).
Histograms carry native buckets, and classic buckets on the same series when
` + "`telemetry.classic_histograms`" + ` is on (the classic series add ` + "`_bucket`, `_sum` and `_count`" + `;
see [classic buckets](#classic-buckets)), but those of type "native histogram", which have native
buckets only. Every counter is monotone by construction: those read from cumulative sources
(the host's, the cgroup's, the ledger sink's) export the largest value they exported, so a
source that steps back never reads as a reset. The Go and process collectors' ` + "`go_*`" + ` and
` + "`process_*`" + ` series (client_golang's own) are not listed.

The last column names the OpenTelemetry instrument that carries the same figure when OTLP
export is on. One difference: ` + "`" + InstrumentOperationDuration + "`" + ` also records sent
failures, with ` + "`error.type`" + ` set to the outcome, where
` + "`" + metricDuration + "`" + ` holds ok requests only.

## Metrics

| Metric | Type | Unit | Labels | Help | OTel instrument |
|---|---|---|---|---|---|
`)
	for _, m := range Metrics() {
		unit, otel := m.Unit, "–"
		if unit == "" {
			unit = "–"
		}
		if m.OTel != "" {
			otel = "`" + m.OTel + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", m.Name, m.Kind, cell(unit), codeList(m.Labels), cell(m.Help), otel)
	}
	b.WriteString(`
## Labels

| Label | Meaning | Values |
|---|---|---|
`)
	for _, l := range Labels() {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", l.Name, cell(l.Meaning), codeList(l.Values))
	}
	b.WriteString(cardinalityDoc)
	return b.Bytes()
}
