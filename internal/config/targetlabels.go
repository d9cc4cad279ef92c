package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// Bounds of a target's constant labels (the labels of its file_sd entry
// other than name and model, or a target block's labels).
const (
	MaxTargetLabels     = 16
	MaxLabelNameBytes   = 63
	MaxLabelValueBytes  = 128
	minRefreshInterval  = Duration(time.Second)
	reservedLabelPrefix = "__"
)

// reservedLabels are the label names llmprobe's own series use (and those
// Prometheus adds on scrape): a constant label may not take one.
var reservedLabels = map[string]bool{
	"target": true, "class": true, "region": true, "traffic": true, "during": true,
	"outcome": true, "reason": true, "step": true, "turn": true, "bound": true,
	"scope": true, "shard": true, "shards": true, "cause": true, "type": true,
	"api": true, "name": true, "model": true, "le": true, "quantile": true,
	"job": true, "instance": true,
}

// Interval is the block's polling interval (refresh_interval, else 5m).
func (b TargetFiles) Interval() time.Duration {
	if b.RefreshInterval == 0 {
		return DefaultRefreshInterval.D()
	}
	return b.RefreshInterval.D()
}

// validateTargetFiles checks target_templates, target_files and every
// target's constant labels, whose values it cleans with the one sanitiser.
func (c *Config) validateTargetFiles(el *errorList) {
	for _, n := range sortedKeys(c.TargetTemplates) {
		if !ValidName(n) {
			el.add("target_templates."+n, "want a template name of %s", NameRule)
		}
	}
	for i, b := range c.TargetFiles {
		if b.RefreshInterval != 0 && b.RefreshInterval < minRefreshInterval {
			el.add(fmt.Sprintf("target_files[%d].refresh_interval", i), "want at least %v (0 = %v)", minRefreshInterval, DefaultRefreshInterval)
		}
	}
	for i := range c.Targets {
		checkLabels(el, fmt.Sprintf("targets[%d].labels", i), c.Targets[i].Labels)
	}
}

// checkLabels applies the label rules to ls, cleaning each value in place.
func checkLabels(el *errorList, p string, ls map[string]string) {
	if len(ls) > MaxTargetLabels {
		el.add(p, "at most %d constant labels, got %d", MaxTargetLabels, len(ls))
		return
	}
	for _, k := range sortedKeys(ls) {
		switch {
		case strings.HasPrefix(k, reservedLabelPrefix) || reservedLabels[k]:
			el.add(p+"."+k, "label %q is reserved (llmprobe's own labels, Prometheus' __ names)", sanitize.String(k, MaxLabelNameBytes))
		case len(k) > MaxLabelNameBytes || !model.LegacyValidation.IsValidLabelName(k):
			el.add(p+"."+k, "label name %q: want [a-zA-Z_][a-zA-Z0-9_]*, at most %d bytes", sanitize.String(k, MaxLabelNameBytes), MaxLabelNameBytes)
		case len(ls[k]) > MaxLabelValueBytes:
			el.add(p+"."+k, "value longer than %d bytes", MaxLabelValueBytes)
		default:
			ls[k] = sanitize.String(ls[k], MaxLabelValueBytes)
		}
	}
}
