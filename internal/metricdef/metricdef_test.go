package metricdef

import (
	"strings"
	"testing"
)

// TestNames: every name is a metric name of its family, once, and every
// /probe metric has its help.
func TestNames(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Prober {
		if !strings.HasPrefix(n, "llmprobe_") || seen[n] {
			t.Errorf("%q: not an llmprobe_ name, or listed twice", n)
		}
		seen[n] = true
	}
	for _, s := range Probe {
		if !strings.HasPrefix(s.Name, "probe_") || seen[s.Name] || s.Help == "" {
			t.Errorf("%q: not a probe_ name, listed twice, or without help", s.Name)
		}
		seen[s.Name] = true
		if ProbeSpec(s.Name).Name != s.Name {
			t.Errorf("ProbeSpec(%q) finds another", s.Name)
		}
	}
}
