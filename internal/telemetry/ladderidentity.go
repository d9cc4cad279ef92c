package telemetry

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/internal/metricdef"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

const (
	metricLadderIdentity = metricdef.LadderIdentity
	labelComplete        = "complete"
)

// SetLadderIdentity records the identity the last ladder of target was
// measured on (the model and version when it began) beside its capacity:
// complete is false when a deploy or a restart cut it (its capacity is
// then a lower bound of that identity). The one series of the target is
// replaced. Both values are server text, cleaned by the one rule
// (sanitize); a value the registry refuses is counted as dropped.
func (r *Recorder) SetLadderIdentity(target, model, version string, complete bool) {
	defer r.recoverDrop("ladder identity")
	model, version = sanitize.String(model, maxLabelBytes), sanitize.String(version, maxLabelBytes)
	r.prom.ladderIdentity.DeletePartialMatch(prometheus.Labels{labelTarget: target})
	g, err := r.prom.ladderIdentity.GetMetricWithLabelValues(target, model, version, strconv.FormatBool(complete), r.scope())
	if err != nil {
		r.drop(DropLabel, metricLadderIdentity, err)
		return
	}
	g.Set(1)
}
