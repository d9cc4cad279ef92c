package daemon

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/probehandler"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/telemetry"
)

// newProbeHandler builds the /probe endpoint on the daemon's group (its
// records reach the daemon's sinks through col, one of them) and its
// running targets.
// Its llmprobe_probe_refused_total is on the recorder's registry, with the
// region label the recorder's series carry.
func (d *Daemon) newProbeHandler(col *probehandler.Collector) (*probehandler.Handler, error) {
	var reg prometheus.Registerer = d.rec.Registry()
	if r := d.opts.Config.Region; r != "" {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{"region": r}, reg)
	}
	return probehandler.New(probehandler.Options{
		Config: d.probeConfig, Group: d.group, Collector: col, Targets: d.probeTarget, Buffers: d.buffers, Logger: d.log, Registerer: reg,
		Hook: func(target, api string) probehandler.Hook {
			return d.opts.Tracing.Hook(target, telemetry.OperationName(api)) // nil without tracing
		},
	})
}

// probeConfig is the configuration in force, as /probe reads it.
func (d *Daemon) probeConfig() *config.Config {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg
}

// probeTarget is a running target as /probe sends to it: its own client
// (in flight tracked with the target's), and its budget.
func (d *Daemon) probeTarget(name string) (probehandler.Configured, bool) {
	d.mu.Lock()
	r := d.targets[name]
	d.mu.Unlock()
	if r == nil {
		return probehandler.Configured{}, false
	}
	c := probehandler.Configured{Target: r.cfg, Exec: func(params func(*ledger.Record) protocol.Params) dispatch.Exec {
		return r.plan.ExecWith(r.boundUsage(params), d.led.Now)
	}}
	if r.budget != nil {
		c.Admit = r.budget.Admit
	}
	return c, true
}
