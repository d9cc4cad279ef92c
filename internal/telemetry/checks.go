package telemetry

import (
	"context"
	"fmt"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/metricdef"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// The answer canaries' counter (docs/checks.md) and its OTel twin.
const (
	metricAnswerChecks     = metricdef.AnswerChecks
	labelCheck             = "check"
	InstrumentAnswerChecks = "llmprobe.answer_checks"
)

// checkReasonsOf is the failure reasons a check of each kind can give: a
// check's fail series created at zero (InitChecks). A round trip's final
// answer fails as mismatch, so a tool call can too.
var checkReasonsOf = map[answercheck.Kind][]answercheck.Reason{
	answercheck.KindExpect:   {answercheck.Mismatch},
	answercheck.KindJSON:     {answercheck.InvalidJSON, answercheck.Schema},
	answercheck.KindToolCall: {answercheck.NoToolCall, answercheck.WrongTool, answercheck.BadArguments, answercheck.Mismatch},
	answercheck.KindStop:     {answercheck.StopIgnored},
	answercheck.KindLength:   {answercheck.LengthIgnored},
	answercheck.KindModel:    {answercheck.WrongModel},
}

// InitChecks creates at zero the llmprobe_answer_checks_total series of a
// canary class's checks: pass and not_judged, and fail with each reason
// its kind can give, so that a first failure is an increase (rules that
// read increase() or rate() see it) rather than a series born at 1. A
// class has at most config.MaxChecksPerClass checks: at most 6 series
// each here, and any other (result, reason) pair is created when it first
// occurs.
func (r *Recorder) InitChecks(target, class string, checks []answercheck.Check) {
	defer r.recoverDrop("init checks")
	target, class = sanitize.String(target, maxLabelBytes), sanitize.String(class, maxLabelBytes)
	for i := range checks {
		c := &checks[i]
		name := sanitize.String(c.Name, maxLabelBytes)
		for _, res := range []answercheck.Result{answercheck.Pass, answercheck.NotJudged} {
			r.prom.answerChecks.WithLabelValues(target, class, name, string(res), "")
		}
		for _, reason := range checkReasonsOf[c.Kind()] {
			r.prom.answerChecks.WithLabelValues(target, class, name, string(answercheck.Fail), string(reason))
		}
	}
}

// checkLabels are a record's check result and reason as label values, or
// an error when they are outside the closed sets (never recorded: a
// label takes no server text). The reason is "" (the label absent) unless
// the result is fail.
func checkLabels(c *ledger.CheckRecord) (result, reason string, err error) {
	if !slices.Contains(answercheck.Results(), c.Result) {
		return "", "", fmt.Errorf("check result %q", sanitize.String(string(c.Result), 32))
	}
	if c.Result != answercheck.Fail {
		return string(c.Result), "", nil
	}
	if !slices.Contains(answercheck.Reasons(), c.Reason) {
		return "", "", fmt.Errorf("check reason %q", sanitize.String(string(c.Reason), 32))
	}
	return string(c.Result), string(c.Reason), nil
}

// recordCheck counts a finished record's check (none on a record without
// one). target and class are the record's label values, already
// sanitised (promSeries); the check's name is the configuration's, cleaned
// by the one rule all the same.
func (m *promMetrics) recordCheck(target, class string, rec *ledger.Record, drop func(reason, what string, err error)) {
	if rec.Check == nil {
		return
	}
	result, reason, err := checkLabels(rec.Check)
	if err != nil {
		drop(DropLabel, metricAnswerChecks, err)
		return
	}
	c, err := m.answerChecks.GetMetricWithLabelValues(target, class, sanitize.String(rec.Check.Name, maxLabelBytes), result, reason)
	if err != nil {
		drop(DropLabel, metricAnswerChecks, err)
		return
	}
	c.Inc()
}

// newOtelChecks is the OTel twin of llmprobe_answer_checks_total.
func newOtelChecks(m metric.Meter) (metric.Int64Counter, error) {
	return m.Int64Counter(InstrumentAnswerChecks, metric.WithUnit("{check}"),
		metric.WithDescription("Answer checks run, by check, result (pass, fail, not_judged) and failure reason."))
}

// recordCheck adds a finished record's check to the OTel counter, with
// the Prometheus series' labels as llmprobe.* attributes (llmprobe.reason
// only on a failure).
func (in *otelInstruments) recordCheck(rec *ledger.Record) {
	if rec.Check == nil {
		return
	}
	result, reason, err := checkLabels(rec.Check)
	if err != nil {
		return // counted by the Prometheus side
	}
	attrs := []attribute.KeyValue{
		attribute.String("llmprobe.target", sanitize.String(rec.Target, maxLabelBytes)),
		attribute.String("llmprobe.class", sanitize.String(rec.Class, maxLabelBytes)),
		attribute.String("llmprobe.check", sanitize.String(rec.Check.Name, maxLabelBytes)),
		attribute.String("llmprobe.result", result),
	}
	if reason != "" {
		attrs = append(attrs, attribute.String("llmprobe.reason", reason))
	}
	in.checks.Add(context.Background(), 1, metric.WithAttributes(attrs...))
}
