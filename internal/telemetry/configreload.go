package telemetry

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ConfigReload exports the outcome of the daemon's last configuration load
// (at start, on SIGHUP and on POST /-/reload), as Prometheus,
// Alertmanager and blackbox_exporter do:
// llmprobe_config_last_reload_successful (1 or 0) and
// llmprobe_config_last_reload_success_timestamp_seconds.
type ConfigReload struct {
	ok, ts prometheus.Gauge
}

// NewConfigReload registers the two gauges with reg; region, when set, is
// their constant region label (as on the Recorder's series).
func NewConfigReload(reg prometheus.Registerer, region string) (*ConfigReload, error) {
	var cl prometheus.Labels
	if region != "" {
		cl = prometheus.Labels{"region": region}
	}
	gauge := func(name string) prometheus.Gauge {
		m := spec(name)
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: m.Name, Help: m.Help, ConstLabels: cl})
	}
	c := &ConfigReload{ok: gauge(metricReloadOK), ts: gauge(metricReloadTime)}
	for _, g := range []prometheus.Gauge{c.ok, c.ts} {
		if err := reg.Register(g); err != nil {
			return nil, fmt.Errorf("telemetry: register config reload gauges: %w", err)
		}
	}
	return c, nil
}

// Set records a load that succeeded (the timestamp moves to at) or failed
// (the timestamp stays that of the last success).
func (c *ConfigReload) Set(ok bool, at time.Time) {
	if !ok {
		c.ok.Set(0)
		return
	}
	c.ok.Set(1)
	c.ts.Set(float64(at.UnixNano()) / 1e9)
}
