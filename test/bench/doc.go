// Package bench measures llmprobe's load generator end to end: the open-loop
// dispatcher, the protocol client and the SSE reader driving a fast local
// streaming server (the simulator, in its own process so that the CPU
// measured is the generator's alone).
//
//   - BenchmarkThroughput, at rising rates: the achieved rate, the
//     dispatch-lag p99 and the generator's CPU time per request.
//   - BenchmarkStreamCost, by stream length: CPU per request and per chunk,
//     and memory per stream in flight (docs/scale.md).
//   - BenchmarkStreamMemoryTLS: the same memory per stream in flight at
//     ~1,000 streams over plain HTTP and over HTTPS, side by side
//     (docs/scale.md#plain-http-and-https-side-by-side).
//   - BenchmarkFleetLadder: one ladder from one prober alone and from a
//     fleet of three `llmprobe run` processes on loopback; the highest step
//     whose verdict was valid (every shard's share present and valid).
//   - BenchmarkTargets: 10, 100 and 1,000 targets (two classes at 0.2
//     req/s each, ladders off) on one prober against one simulator, and
//     one busy target at their total rate: resident set, CPU per
//     target-hour and per request, series, scrape bytes and time, the
//     generator's verdict (docs/scale.md#many-targets-on-one-prober).
//   - BenchmarkStatusMemory: what the status page keeps per target once
//     its hour of one-minute windows is full, time-compressed.
//   - BenchmarkRingMemory: what the /debug/requests ring keeps for 1,000
//     targets after a minute, ten and an hour of records, time-compressed.
//
// TestCardinality (not a benchmark: it passes or fails, in seconds;
// skipped with -short) checks each target's series on a live /metrics
// against the formula of docs/metrics.md#cardinality.
//
// Run them with
//
//	go test -run '^$' -bench Throughput -benchtime 1x ./test/bench/
//
// (StreamCost, FleetLadder likewise). They are benchmarks, never pass/fail
// tests: machines are shared and noisy.
package bench
