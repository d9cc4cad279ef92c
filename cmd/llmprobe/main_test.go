package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// mainArgsEnv, when set in the environment, makes the test binary run the
// real main() with these arguments (JSON) instead of the tests: signal
// tests run llmprobe as a child process they can send signals to.
const mainArgsEnv = "LLMPROBE_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(mainArgsEnv); args != "" {
		var a []string
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			panic(err)
		}
		os.Args = append([]string{"llmprobe"}, a...)
		main() // exits
	}
	goleak.VerifyTestMain(m,
		// signal.Notify (run's SIGHUP handler) starts the runtime's signal
		// loop once per process; it is not a leak of the code under test.
		goleak.IgnoreAnyFunction("os/signal.signal_recv"),
		goleak.IgnoreAnyFunction("os/signal.loop"),
	)
}

// syncBuffer is testutil.SyncBuffer (safe for the concurrent writes of
// progress lines and logs) under the name this package's tests use.
type syncBuffer = testutil.SyncBuffer

// result is what one invocation of the CLI left behind.
type result struct {
	code           int
	stdout, stderr string
}

// invoke runs the CLI in-process with ctx and returns its exit code and
// output. The environment is empty: nothing leaks in from the host.
func invoke(ctx context.Context, args ...string) result {
	return invokeHard(ctx, context.Background(), args...)
}

// invokeHard is invoke with hard as the context whose cancellation (the
// second interrupt) cuts the drain short.
func invokeHard(ctx, hard context.Context, args ...string) result {
	return invokeEnv(ctx, hard, nil, args...)
}

// invokeEnv is invokeHard with the given environment variables.
func invokeEnv(ctx, hard context.Context, vars map[string]string, args ...string) result {
	var out, errb testutil.SyncBuffer
	e := env{stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }, hard: hard}
	code := run(ctx, e, args)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// completes runs the CLI and accepts exit 0 or exit 4 (generator invalid):
// for tests that check something else than the generator's validity, which
// a loaded machine can spoil (the verdict is still printed and checked by
// the tests that are about it).
func completes(t *testing.T, args ...string) result {
	t.Helper()
	r := mustExit(t, []int{exitOK, exitGeneratorInvalid}, args...)
	if r.code == exitGeneratorInvalid {
		t.Logf("generator invalid on this machine: %s", lastLine(r.stderr))
	}
	return r
}

// mustExit runs the CLI with a generous deadline and fails the test unless
// it exits with one of codes.
func mustExit(t *testing.T, codes []int, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second)
	defer cancel()
	r := invoke(ctx, args...)
	if !slices.Contains(codes, r.code) {
		t.Fatalf("llmprobe %s: exit code %d, want one of %v\nstderr:\n%s", strings.Join(args, " "), r.code, codes, r.stderr)
	}
	if strings.Contains(r.stderr, "INVARIANT VIOLATED") {
		t.Errorf("llmprobe %s: %s", strings.Join(args, " "), r.stderr)
	}
	return r
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// decodeProbe decodes `probe --json` output.
func decodeProbe(t *testing.T, r result) report.Probe {
	t.Helper()
	var p report.Probe
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("decoding probe --json output: %v\n%s", err, r.stdout)
	}
	return p
}

// readLedger reads a JSONL ledger: the run header, then the records.
func readLedger(t *testing.T, path string) (ledger.RunHeader, []ledger.Record) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open ledger: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var h ledger.RunHeader
	var recs []ledger.Record
	line := 0
	for sc.Scan() {
		line++
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if line == 1 {
			if err := dec.Decode(&h); err != nil {
				t.Fatalf("ledger line 1 (run header): %v", err)
			}
			continue
		}
		var r ledger.Record
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("ledger line %d: %v", line, err)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading ledger: %v", err)
	}
	if line == 0 {
		t.Fatal("ledger is empty: no run header")
	}
	return h, recs
}

// countOutcomes counts records by outcome and by outcome/reason.
func countOutcomes(recs []ledger.Record) (map[ledger.Outcome]int, map[string]int) {
	byO, byR := map[ledger.Outcome]int{}, map[string]int{}
	for _, r := range recs {
		byO[r.Outcome]++
		byR[string(r.Outcome)+"/"+string(r.Reason)]++
	}
	return byO, byR
}

// checkLedgerInvariants asserts what every ledger must satisfy: one record
// per id, every (outcome, reason) in the closed set, a planned offset on
// every record, dispatched exactly when sent, an end after dispatch.
func checkLedgerInvariants(t *testing.T, recs []ledger.Record) {
	t.Helper()
	seen := make(map[uint64]bool, len(recs))
	for _, r := range recs {
		if seen[r.ID] {
			t.Errorf("ledger: id %d appears twice", r.ID)
		}
		seen[r.ID] = true
		if err := ledger.Check(r.Outcome, r.Reason); err != nil {
			t.Errorf("ledger: record %d: %v", r.ID, err)
		}
		if r.Planned <= 0 {
			t.Errorf("ledger: record %d has no planned offset (%v)", r.ID, r.Planned)
		}
		if r.Outcome.Sent() != r.Sent() {
			t.Errorf("ledger: record %d outcome %s but dispatched_ns=%v", r.ID, r.Outcome, r.Dispatched)
		}
		if r.Sent() && r.End < r.Dispatched {
			t.Errorf("ledger: sent record %d ends at %v, before its dispatch %v", r.ID, r.End, r.Dispatched)
		}
	}
}

// fastSim is a simulator configuration whose requests finish quickly:
// fixed 20 ms prefill, 5 ms per token.
func fastSim() sim.Config {
	c := sim.DefaultConfig()
	c.TTFT = sim.FixedDist(0.020)
	c.TokenTime = sim.FixedDist(0.005)
	c.OutputTokens = sim.FixedDist(8)
	return c
}

// newSim is testutil.NewSim (a simulator closed when the test ends, for
// tests that serve its Handler behind their own or read its live state)
// under the name this package's tests use.
func newSim(t *testing.T, cfg sim.Config) *sim.Server {
	t.Helper()
	return testutil.NewSim(t, cfg)
}

// startSim is testutil.StartSim (a simulator on 127.0.0.1 until the test
// ends; its base URL) under the name this package's tests use.
func startSim(t *testing.T, cfg sim.Config) string {
	t.Helper()
	return testutil.StartSim(t, cfg)
}

// closedPort returns a 127.0.0.1 address on which nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("close listener: %v", err)
	}
	return addr
}

// tempPath is a path in the test's temporary directory.
func tempPath(t *testing.T, name string) string {
	return filepath.Join(t.TempDir(), name)
}
