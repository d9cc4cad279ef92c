// Package integration runs llmprobe against real components: the built
// binary probing its simulator, scraped by a real Prometheus 3.x server with
// native histograms, which also receives llmprobe's OTLP metrics. The tests
// need a prometheus binary (LLMPROBE_PROMETHEUS, else on PATH, else in
// ~/.cache/llmprobe/bin where .ci/run installs it) and skip with a message
// without it.
package integration
