// Package integration runs llmprobe against real components: the built
// binary probing its simulator, scraped by a real Prometheus 3.x server with
// native histograms, which also receives llmprobe's OTLP metrics. The tests
// need LLMPROBE_PROMETHEUS (a prometheus binary; .ci/run installs one) and
// skip with a message without it.
package integration
