package telemetry

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Why /probe refused a scrape (the reason label of
// llmprobe_probe_refused_total): a closed set, whatever the scrape held.
const (
	// ProbeRefusedTargetNotAllowed: the target is neither a configured
	// target's name nor a URL under probe.allowed_targets (403).
	ProbeRefusedTargetNotAllowed = "target_not_allowed"
	// ProbeRefusedModuleUnknown: no module parameter, or one not configured (400).
	ProbeRefusedModuleUnknown = "module_unknown"
	// ProbeRefusedBadRequest: anything else wrong with the scrape: no
	// target, a bad scrape-timeout header, a timeout the burst does not
	// fit, a URL for a module that names no model (400).
	ProbeRefusedBadRequest = "bad_request"
	// ProbeRefusedMethod: a method other than GET (405).
	ProbeRefusedMethod = "method_not_allowed"
	// ProbeRefusedConcurrency: beyond probe.max_concurrent (503).
	ProbeRefusedConcurrency = "concurrency"
	// ProbeRefusedError: the probe could not be set up (a client that
	// could not be built, 500).
	ProbeRefusedError = "error"
)

// ProbeRefusedReasons is every reason, in the order of docs/metrics.md.
var ProbeRefusedReasons = []string{
	ProbeRefusedTargetNotAllowed, ProbeRefusedModuleUnknown, ProbeRefusedBadRequest,
	ProbeRefusedMethod, ProbeRefusedConcurrency, ProbeRefusedError,
}

var probeRefusedList = strings.Join(ProbeRefusedReasons, ", ")

// NewProbeRefused returns llmprobe_probe_refused_total{reason}, every
// reason's series created at 0 (so that increase() sees the first
// refusal). Register it once, where /metrics gathers.
func NewProbeRefused() *prometheus.CounterVec {
	m := spec(metricProbeRefused)
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: m.Name, Help: m.Help}, m.Labels)
	for _, r := range ProbeRefusedReasons {
		c.WithLabelValues(r)
	}
	return c
}
