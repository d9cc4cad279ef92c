// Package servermetrics is what an inference server's own Prometheus
// metrics say over a measurement window (a ladder step, a probe run): its
// running and waiting requests, its KV-cache usage, its own TTFT,
// inter-token and end-to-end latency over the window, and any other
// configured metric. It is pure: it parses expositions and folds them into
// a View, and never opens a connection (the HTTP scraper that fetches them
// is the scrape subpackage), so stats and report can hold a View without
// the network.
//
// Parse reads one exposition with github.com/prometheus/common/expfmt
// (Prometheus text format, OpenMetrics 1.0, or delimited protobuf, as the
// Content-Type says). The body is hostile input: anything that does not
// parse is a clear error, values that make no sense (NaN, ±Inf, a
// negative count, a KV-cache fraction above 1, non-cumulative buckets) are
// left out and counted, and every string that reaches a View (the URL, a
// metric name, an error) has passed through sanitize.
//
// An Accumulator folds the expositions of one window into a View:
//
//   - gauges: value at the start, min, max and last over every scrape of the
//     window (summed across series, or the maximum for a fraction such as
//     KV-cache usage);
//   - counters: increase and rate over the window, summed across series; a
//     counter that goes down between two scrapes was reset (a server
//     restart): the increase counts from zero after it, the reset is counted
//     and the figure is marked a lower bound, never a negative rate;
//   - histograms: the bucket deltas over the window (resets as for
//     counters), merged across series on their common bucket bounds, with
//     p50/p95/p99 interpolated within buckets as Prometheus'
//     histogram_quantile does and the number of observations; a quantile
//     that falls in the +Inf bucket is reported as the highest finite bound,
//     marked a lower bound.
//
// Which names mean what is a small table per server flavour (vLLM, SGLang,
// TGI, llama.cpp; Profile), detected from the names the server exposes
// unless configured; ParseFlavour is the one parser of a configured
// flavour. Explain turns a View into one line for a report: "waiting queue
// grew from 0 to 37; KV cache up to 98 %; …"; Gap sets the client's TTFT
// beside the server's.
//
// The package is a leaf: it imports sanitize and nothing else of the
// project, and no network package (test/arch holds it to that).
package servermetrics
