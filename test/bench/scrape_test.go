package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// prober is one `llmprobe run` child process.
type prober struct {
	addr string // admin host:port
	pid  int
}

// startProber writes cfg (a YAML configuration whose admin.listen is
// ADMIN) and runs `bin run` on it until the test ends; it returns once
// /-/ready answers, or fails the test after wait.
func startProber(tb testing.TB, bin, cfg string, wait time.Duration) prober {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	path := filepath.Join(tb.TempDir(), "llmprobe.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(cfg, "ADMIN", addr)), 0o600); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config.file", path)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return prober{addr: addr, pid: cmd.Process.Pid}
			}
		}
	}
	tb.Fatalf("llmprobe run did not become ready at %s within %s", addr, wait)
	return prober{}
}

// Exposition formats a scrape asks for: the text format, and the
// delimited protobuf Prometheus negotiates when it scrapes native
// histograms.
const (
	acceptText  = "text/plain;version=0.0.4"
	acceptProto = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"
)

// scrapeResult is one /metrics scrape.
type scrapeResult struct {
	bytes    int
	samples  int // sample lines, text scrapes only
	took     time.Duration
	families []*dto.MetricFamily // protobuf scrapes only
}

// scrape reads addr's /metrics once in the format accept names.
func scrape(addr, accept string) (scrapeResult, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return scrapeResult{}, err
	}
	req.Header.Set("Accept", accept)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return scrapeResult{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil {
		return scrapeResult{}, err
	}
	res := scrapeResult{bytes: len(body), took: took}
	if accept != acceptProto {
		for _, line := range bytes.Split(body, []byte("\n")) {
			if len(line) > 0 && line[0] != '#' {
				res.samples++
			}
		}
		return res, nil
	}
	dec := expfmt.NewDecoder(bytes.NewReader(body), expfmt.NewFormat(expfmt.TypeProtoDelim))
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); err != nil {
			if errors.Is(err, io.EOF) {
				return res, nil
			}
			return res, fmt.Errorf("decode /metrics: %w", err)
		}
		res.families = append(res.families, mf)
	}
}

// seriesOf is what Prometheus 3 stores of one exposed metric with
// scrape_native_histograms: true: one series for a counter, a gauge or a
// native histogram, and, when classic is set (always_scrape_classic_histograms:
// true), a histogram's classic series too (one per finite bucket, +Inf,
// _sum and _count) when it exposes classic buckets.
func seriesOf(mf *dto.MetricFamily, m *dto.Metric, classic bool) int {
	if mf.GetType() != dto.MetricType_HISTOGRAM {
		return 1
	}
	h := m.GetHistogram()
	finite := 0
	for _, b := range h.GetBucket() {
		if !math.IsInf(b.GetUpperBound(), 1) {
			finite++
		}
	}
	n := 1 // the native histogram
	if classic && finite > 0 {
		n += finite + 3
	}
	return n
}

// seriesPerTarget counts each target's llmprobe_* series in a protobuf
// scrape (the series carrying its target label), and the process's own
// (every other series, llmprobe_* or not).
func seriesPerTarget(mfs []*dto.MetricFamily, classic bool) (perTarget map[string]int, process int) {
	perTarget = map[string]int{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			target := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "target" {
					target = l.GetValue()
				}
			}
			n := seriesOf(mf, m, classic)
			if target == "" || !strings.HasPrefix(mf.GetName(), "llmprobe_") {
				process += n
				continue
			}
			perTarget[target] += n
		}
	}
	return perTarget, process
}

// gaugeByTarget returns a per-target gauge's value for each target.
func gaugeByTarget(mfs []*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "target" {
					out[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return out
}

// counterSum sums a counter family's series whose labels include every
// pair of match.
func counterSum(mfs []*dto.MetricFamily, name string, match map[string]string) float64 {
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			hit := 0
			for _, l := range m.GetLabel() {
				if v, ok := match[l.GetName()]; ok && v == l.GetValue() {
					hit++
				}
			}
			if hit == len(match) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// procStatus reads a field of /proc/pid/status in kB (VmRSS, VmHWM) as
// bytes; 0 where it cannot be read.
func procStatus(pid int, field string) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			var kb uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
