// Package chaos is llmprobe's chaos suite: a hostile streaming server on
// 127.0.0.1 with one named behaviour per way a target can misbehave, and
// tests that point the real llmprobe binary at it.
//
// TestCases runs every case of the case table (cases_test.go) through both
// `llmprobe probe` and a short `llmprobe run`, each a real process built by
// the test, and asserts the terminal outcome and reason of every request,
// the ledger invariants, that no failed request is a sample of a success
// latency, the peak memory of the process, and that the API key (a
// sentinel the hostile server echoes back wherever it can) appears nowhere:
// not on stdout, stderr (the logs), in the ledger, /metrics,
// /debug/requests, /config or the status page.
//
// TestDaemonPhases runs one long `llmprobe run` through healthy, down, every
// hostile behaviour in turn and healthy again, with bad and good SIGHUP
// reloads, and asserts that it stays up and ready, that no /metrics counter
// ever goes down, that the counters add up to the ledger files, that its
// goroutines return to their baseline and that its baseline rate holds.
//
// TestCountersMonotoneUnderLoad scrapes a short `llmprobe run` under its
// baseline load 150 times back to back and fails on any counter, histogram
// count or sum that goes down between two scrapes (the host's counters
// included).
//
// The case table is rendered into docs/chaos.md; TestCaseTableDoc fails when
// the two differ (regenerate with `go test ./test/chaos -run
// TestCaseTableDoc -update`).
//
// Everything listens on 127.0.0.1 only, and every request ends by one of the
// short timeouts the cases configure, so every loop stops by itself.
package chaos
