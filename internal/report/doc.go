// Package report renders statistics: the human text report and the JSON
// object of `llmprobe probe`, and the step table, SVG chart and HTML page of
// a rate ladder. It computes nothing: every figure comes from a
// stats.Summary or ladderresult.LadderResult; this package only formats it, names
// each figure's boundary, and converts durations to seconds for the probe's
// JSON. A ladder's JSON is its result's own (ladderresult.LadderResult's schema,
// stats/ladderjson.go), the same the history file holds.
package report
