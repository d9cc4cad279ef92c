package docs

import (
	"regexp"
	"strings"
	"testing"
)

// metricRE finds llmprobe_* names (lower case: LLMPROBE_ variables are not
// metrics).
var metricRE = regexp.MustCompile(`\bllmprobe_[a-z0-9_]*[a-z0-9]`)

// notMetrics are llmprobe_* words in the docs that are not metric names.
var notMetrics = map[string]string{
	"llmprobe_target":  "OTLP attribute llmprobe.target as Prometheus stores it",
	"llmprobe_class":   "OTLP attribute llmprobe.class as Prometheus stores it",
	"llmprobe_traffic": "OTLP attribute llmprobe.traffic as Prometheus stores it",
}

// formerMetrics are names that were renamed: the changelog says so, and
// no other document may use them.
var formerMetrics = map[string]string{
	"llmprobe_arrival_rate":             "llmprobe_arrival_rate_requests_per_second",
	"llmprobe_ladder_step_offered_rate": "llmprobe_ladder_step_offered_rate_requests_per_second",
}

// seriesSuffixes are the series a classic histogram adds to its name.
var seriesSuffixes = []string{"_bucket", "_count", "_sum"}

// Every llmprobe_* metric a document names exists in docs/metrics.md,
// which the telemetry package generates from its catalog and tests: a
// renamed or removed metric cannot linger in the prose.
func TestMetricNamesExist(t *testing.T) {
	const reference = "docs/metrics.md"
	if !exists(reference) {
		if excused("file " + reference) {
			t.Skipf("%s is not generated on this branch yet (%s)", reference, aheadOfCode["file "+reference])
		}
		t.Fatalf("%s is missing: go test ./internal/telemetry -run TestMetricsDoc -update", reference)
	}
	known := map[string]bool{}
	for _, name := range metricRE.FindAllString(repoFile(t, reference), -1) {
		known[name] = true
	}
	if len(known) < 20 {
		t.Fatalf("%s: only %d metric names found", reference, len(known))
	}
	n := 0
	for _, doc := range append(docFiles(t), "deploy/README.md", "alerts/README.md") {
		if doc == reference {
			continue
		}
		text := repoFile(t, doc)
		for _, loc := range metricRE.FindAllStringIndex(text, -1) {
			name := text[loc[0]:loc[1]]
			if rest := text[loc[1]:]; strings.HasPrefix(rest, "*") || strings.HasPrefix(rest, "_*") ||
				strings.HasPrefix(rest, "…") || strings.HasPrefix(rest, "_…") {
				continue // a family: llmprobe_requests_*
			}
			if _, ok := notMetrics[name]; ok {
				continue
			}
			n++
			if known[name] {
				continue
			}
			base := name
			for _, s := range seriesSuffixes {
				base = strings.TrimSuffix(base, s)
			}
			if known[base] {
				continue
			}
			if now, ok := formerMetrics[name]; ok && doc == "CHANGELOG.md" && known[now] {
				continue
			}
			t.Errorf("%s names %s, which %s does not list", doc, name, reference)
		}
	}
	if n < 30 {
		t.Errorf("only %d metric names found in the docs: the pattern is broken", n)
	}
}
