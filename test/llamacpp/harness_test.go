package llamacpp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// llmprobe is built without the race detector, whatever the tests run
// with: these tests compare the client's timings with the server's, and
// the detector's slowdown would be part of the client's.
var llmprobe testutil.Binary

func binary(t *testing.T) string { return llmprobe.Path(t) }

func TestMain(m *testing.M) { os.Exit(llmprobe.Main(m)) }

var httpClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

// scrapeMetrics reads a Prometheus text exposition into series → value
// (counters, gauges and untyped values; histograms as _count).
func scrapeMetrics(url string) (map[string]float64, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: status %d", url, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := name + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Untyped != nil:
				out[key] = m.GetUntyped().GetValue()
			case m.Histogram != nil:
				out[name+"_count{"+strings.Join(labels, ",")+"}"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out, nil
}

// tokensPredicted is llama.cpp's llamacpp:tokens_predicted_total now.
func tokensPredicted(t *testing.T, s *testutil.LlamaServer) float64 {
	t.Helper()
	m, err := scrapeMetrics(s.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	v, ok := m["llamacpp:tokens_predicted_total{}"]
	if !ok {
		t.Fatalf("%s/metrics has no llamacpp:tokens_predicted_total", s.URL())
	}
	return v
}

// runLedger is one ledger file: its run header and records.
type runLedger struct {
	header  ledger.RunHeader
	records []ledger.Record
}

// readLedger parses a JSONL ledger (a run header, then records); the
// records must decode into ledger.Record with no unknown field.
func readLedger(path string) (runLedger, error) {
	var lf runLedger
	f, err := os.Open(path)
	if err != nil {
		return lf, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if !utf8.Valid(b) {
			return lf, fmt.Errorf("%s:%d: not valid UTF-8", path, line)
		}
		if line == 1 {
			if err := json.Unmarshal(b, &lf.header); err != nil || lf.header.Kind != "run" {
				return lf, fmt.Errorf("%s:1: not a run header (%v)", path, err)
			}
			continue
		}
		var r ledger.Record
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return lf, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		lf.records = append(lf.records, r)
	}
	return lf, sc.Err()
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
