// Package bench measures llmprobe's load generator end to end: the open-loop
// dispatcher, the protocol client and the SSE reader driving a fast local
// streaming server (the simulator, in its own process so that the CPU
// measured is the generator's alone) at rising rates. It reports, per rate,
// the achieved rate, the dispatch-lag p99 and the generator's CPU time per
// request. Run it with
//
//	go test -run '^$' -bench Throughput -benchtime 1x ./test/bench/
//
// It is a benchmark, never a pass/fail test: machines are shared and noisy.
package bench
