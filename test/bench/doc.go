// Package bench measures llmprobe's load generator end to end: the open-loop
// dispatcher, the protocol client and the SSE reader driving a fast local
// streaming server (the simulator, in its own process so that the CPU
// measured is the generator's alone).
//
//   - BenchmarkThroughput, at rising rates: the achieved rate, the
//     dispatch-lag p99 and the generator's CPU time per request.
//   - BenchmarkStreamCost, by stream length: CPU per request and per chunk,
//     and memory per stream in flight (docs/scale.md).
//   - BenchmarkFleetLadder: one ladder from one prober alone and from a
//     fleet of three `llmprobe run` processes on loopback; the highest step
//     whose verdict was valid (every shard's share present and valid).
//
// Run them with
//
//	go test -run '^$' -bench Throughput -benchtime 1x ./test/bench/
//
// (StreamCost, FleetLadder likewise). They are benchmarks, never pass/fail
// tests: machines are shared and noisy.
package bench
