package dashgen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// The mixin configuration: what a team changes to ship llmprobe's rules and
// dashboards in its own Prometheus, as the Prometheus ecosystem's mixins
// (kubernetes-mixin, node-mixin) take a runbook URL pattern and scrape
// selectors in their _config. Read from a YAML or JSON file (LoadMixin) by
// `dashgen -config FILE`; the shipped files are DefaultMixin's output.

// DefaultRunbookURLPattern is where the shipped alerts' runbook_url
// annotations point: %s is the alert's name in lower case (the anchor of its
// section in alerts/README.md).
const DefaultRunbookURLPattern = "https://github.com/llmprobe/llmprobe/blob/main/alerts/README.md#%s"

// Mixin is the part of the rule and dashboard options a deployment
// configures. The zero value of each field is its default.
type Mixin struct {
	// RunbookURLPattern is each alert's runbook_url: exactly one %s,
	// replaced by the alert's name in lower case. Empty: the default.
	RunbookURLPattern string `yaml:"runbook_url_pattern" json:"runbook_url_pattern"`
	// Selector is a list of PromQL label matchers, such as
	// `job="llmprobe", namespace="monitoring"`, added to every selector of a
	// series the prober exports (and of up) in the rules and dashboards.
	// Empty: every prober Prometheus scrapes, whatever its job.
	Selector string `yaml:"selector" json:"selector"`
	// Severity overrides the severity label of the named alerts.
	Severity map[string]string `yaml:"severity" json:"severity"`
	// ExtraLabels are added to every alert (team, service, …).
	ExtraLabels map[string]string `yaml:"extra_labels" json:"extra_labels"`
	// CertificateExpiry is how far ahead LLMProbeCertificateExpiringSoon
	// tickets and pages (Prometheus durations: "21d"). Zero: 14d and 2d.
	CertificateExpiry CertificateExpiry `yaml:"certificate_expiry" json:"certificate_expiry"`
}

// CertificateExpiry holds the two tiers of the certificate alert.
type CertificateExpiry struct {
	Ticket model.Duration `yaml:"ticket" json:"ticket"`
	Page   model.Duration `yaml:"page" json:"page"`
}

// DefaultSeverity is each alert's shipped severity: page wakes someone,
// ticket is for working hours (alerts/README.md, "Severities").
func DefaultSeverity() map[string]string {
	return map[string]string{
		"LLMProbeAvailabilityBurnRatePage":      "page",
		"LLMProbeAvailabilityBurnRateTicket":    "ticket",
		"LLMProbeLatencyBurnRatePage":           "page",
		"LLMProbeLatencyBurnRateTicket":         "ticket",
		"LLMProbeCorrectnessBurnRatePage":       "page",
		"LLMProbeCorrectnessBurnRateTicket":     "ticket",
		"LLMProbeAnswersWrongAfterChange":       "page",
		"LLMProbeCapacityRegression":            "ticket",
		"LLMProbeCapacityLost":                  "ticket",
		"LLMProbeCapacityRegressionAfterChange": "page",
		"LLMProbePrefixCacheRegression":         "ticket",
		"LLMProbeGeneratorInvalid":              "ticket",
		"LLMProbeAbsent":                        "page",
		"LLMProbeBudgetExhausted":               "ticket",
		"LLMProbeConfigReloadFailed":            "ticket",
		// The early tier (14 days); the late tier (2 days) always pages.
		"LLMProbeCertificateExpiringSoon": "ticket",
	}
}

// reservedLabels are the labels the rules set themselves (or read from the
// series): an extra label of that name would overwrite them.
var reservedLabels = []string{"severity", "slo", "signal", "job", "instance", "region", "target", "class", "model", "version"}

var (
	labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	// matcherList is one or more PromQL label matchers, comma-separated,
	// with an optional trailing comma; values are double-quoted strings.
	matcherList = regexp.MustCompile(`^\s*` + matcher + `(\s*,\s*` + matcher + `)*\s*,?\s*$`)
)

const matcher = `[a-zA-Z_][a-zA-Z0-9_]*\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"`

// LoadMixin reads a mixin configuration (YAML, or JSON) from path. Unknown
// keys are an error, so a misspelt key never silently keeps a default.
func LoadMixin(path string) (Mixin, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Mixin{}, fmt.Errorf("dashgen: reading mixin configuration: %w", err)
	}
	m, err := ParseMixin(b)
	if err != nil {
		return Mixin{}, fmt.Errorf("dashgen: %s: %w", path, err)
	}
	return m, nil
}

// ParseMixin decodes a mixin configuration and validates it.
func ParseMixin(b []byte) (Mixin, error) {
	var m Mixin
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil && !errors.Is(err, io.EOF) {
		return Mixin{}, fmt.Errorf("decoding mixin configuration: %w", err)
	}
	if err := m.validate(); err != nil {
		return Mixin{}, err
	}
	return m, nil
}

func (m Mixin) validate() error {
	if p := m.RunbookURLPattern; p != "" && strings.Count(p, "%s") != 1 {
		return fmt.Errorf("runbook_url_pattern %q: want exactly one %%s (the alert's name in lower case)", p)
	}
	if m.Selector != "" && !matcherList.MatchString(m.Selector) {
		return fmt.Errorf(`selector %q: want PromQL label matchers such as job="llmprobe", namespace="monitoring"`, m.Selector)
	}
	if strings.Contains(m.Selector, "__name__") {
		return fmt.Errorf("selector %q: may not match __name__", m.Selector)
	}
	known := DefaultSeverity()
	for _, a := range slices.Sorted(maps.Keys(m.Severity)) {
		if _, ok := known[a]; !ok {
			return fmt.Errorf("severity: no alert %q (alerts: %s)", a, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
		if strings.TrimSpace(m.Severity[a]) == "" {
			return fmt.Errorf("severity of %s: empty", a)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.ExtraLabels)) {
		switch {
		case !labelName.MatchString(k) || strings.HasPrefix(k, "__"):
			return fmt.Errorf("extra_labels: %q is not a label name", k)
		case slices.Contains(reservedLabels, k):
			return fmt.Errorf("extra_labels: %q is set by the rules themselves (severity: use the severity map)", k)
		}
	}
	return nil
}

// runbookURL is alert's runbook_url annotation.
func (m Mixin) runbookURL(alert string) string {
	p := m.RunbookURLPattern
	if p == "" {
		p = DefaultRunbookURLPattern
	}
	return strings.Replace(p, "%s", strings.ToLower(alert), 1)
}

// alertLabels are alert's labels: its severity (default or overridden),
// the extra labels, and the labels the alert sets itself (kv pairs).
func (m Mixin) alertLabels(alert string, kv ...string) map[string]string {
	out := maps.Clone(m.ExtraLabels)
	if out == nil {
		out = map[string]string{}
	}
	sev, ok := m.Severity[alert]
	if !ok {
		sev = DefaultSeverity()[alert]
	}
	if sev == "" {
		panic("dashgen: no default severity for " + alert) // a constant of this package
	}
	out["severity"] = sev
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// sel is metric selected by the mixin's selector and the given matchers:
// `metric{selector, matchers}`, or the bare name when there are none.
func (m Mixin) sel(metric string, matchers ...string) string {
	var parts []string
	if s := strings.TrimSuffix(strings.TrimSpace(m.Selector), ","); s != "" {
		parts = append(parts, s)
	}
	for _, x := range matchers {
		if x != "" {
			parts = append(parts, x)
		}
	}
	if len(parts) == 0 {
		return metric
	}
	return metric + "{" + strings.Join(parts, ", ") + "}"
}

// jobSel is the dashboards' job selector with the mixin's selector before it.
func (m Mixin) jobSel() string {
	if s := strings.TrimSuffix(strings.TrimSpace(m.Selector), ","); s != "" {
		return s + ", " + selJob
	}
	return selJob
}
