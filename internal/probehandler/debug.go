package probehandler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// debugText is the debug=true page, as blackbox_exporter writes its own:
// the probe's log, the metrics the scrape would have returned, its ledger
// records (JSON, one per line, as in the ledger files) and its module. No
// secret is in any of them: records hold only sanitised text, the module
// names where its key comes from, never the key.
func debugText(p *probe, res result, reg *prometheus.Registry) []byte {
	var b bytes.Buffer
	b.WriteString("Logs for the probe:\n")
	log := slog.New(slog.NewTextHandler(&b, nil)).With("target", p.shown, "module", p.module)
	log.Info("probe planned", "requests", p.burst.Requests, "spacing", p.burst.Spacing.D(), "timeout", p.timeout, "timeout_from", p.bound,
		"traffic", "probe", "target_label", p.label)
	for i := range res.records {
		rec := &res.records[i]
		args := []any{"id", rec.ID, "outcome", rec.Outcome, "reason", rec.Reason}
		if d, ok := rec.DispatchLag(); ok {
			args = append(args, "dispatch_lag", d)
		}
		if d, ok := rec.TTFT(); ok {
			args = append(args, "ttft", d)
		}
		if d, ok := rec.E2E(); ok {
			args = append(args, "e2e", d)
		}
		if rec.Error != "" {
			args = append(args, "error", rec.Error)
		}
		log.Info("request ended", args...)
	}
	if missing := res.planned - len(res.records); missing > 0 {
		log.Warn("requests still in flight when the probe stopped waiting (their records end in the ledger later)", "missing", missing)
	}
	if res.err != nil {
		log.Error("the probe's stream failed", "err", sanitize.String(res.err.Error(), 200))
	}
	if res.success() {
		log.Info("probe succeeded", "duration", res.duration.Round(time.Microsecond))
	} else {
		log.Error("probe failed", "duration", res.duration.Round(time.Microsecond))
	}

	b.WriteString("\n\nMetrics that would have been returned:\n")
	mfs, err := reg.Gather()
	if err != nil {
		fmt.Fprintf(&b, "error gathering metrics: %v\n", err)
	}
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			fmt.Fprintf(&b, "error writing %s: %v\n", mf.GetName(), err)
		}
	}

	b.WriteString("\n\nLedger records (traffic probe, one JSON object per line):\n")
	for i := range res.records {
		line, err := json.Marshal(&res.records[i])
		if err != nil {
			fmt.Fprintf(&b, "error writing record %d: %v\n", res.records[i].ID, err)
			continue
		}
		b.Write(line)
		b.WriteByte('\n')
	}

	b.WriteString("\n\nModule configuration:\n")
	var v any
	if raw, err := json.Marshal(p.mod); err == nil && json.Unmarshal(raw, &v) == nil {
		out, _ := json.MarshalIndent(sanitize.JSON(v), "", "  ")
		b.Write(out)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
