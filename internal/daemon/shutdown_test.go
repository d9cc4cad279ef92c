package daemon

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// slowTimeouts makes a stalled request outlive any drain of these tests.
func slowTimeouts(y string) string {
	return strings.Replace(y, "headers: 300ms, first_content: 600ms, idle: 400ms, total: 2s",
		"headers: 20s, first_content: 20s, idle: 20s, total: 30s", 1)
}

// TestShutdownCensors: Run returns after ctx is cancelled; requests still
// in flight at drain.timeout are censored/drain_deadline, nothing is
// pending, the ledger verifies, nothing is planned after Run returned, and
// the rotating JSONL sink wrote every record (its counters are exported).
func TestShutdownCensors(t *testing.T) {
	fake := newFakeTarget(t)
	fake.mode.Store(modeStall)
	dir := t.TempDir()
	yaml := "ledger: {dir: " + dir + "}\n" + configYAML("300ms", slowTimeouts(targetYAML("t1", fake.url, 10, "")))
	r := startDaemon(t, loadConfig(t, yaml), nil)
	waitFor(t, 5*time.Second, "stalled requests", func() bool { return r.d.group.InFlight() >= 3 })
	fams := r.metrics(t)
	if v, ok := sum(fams, "llmprobe_in_flight_requests", "target", "t1"); !ok || v < 3 {
		t.Errorf("llmprobe_in_flight_requests = %v (%v) at scrape time, want ≥ 3", v, ok)
	}
	if v, ok := sum(fams, "llmprobe_oldest_in_flight_seconds", "target", "t1"); !ok || v <= 0 {
		t.Errorf("llmprobe_oldest_in_flight_seconds = %v (%v), want > 0", v, ok)
	}
	if _, ok := sum(fams, "llmprobe_ledger_records_written_total"); !ok {
		t.Error("llmprobe_ledger_records_written_total missing with ledger.dir set")
	}

	start := time.Now()
	if err := r.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	took := time.Since(start)
	c := r.d.led.Counts()
	if err := r.d.led.Verify(); err != nil || c.Pending != 0 {
		t.Fatalf("ledger: verify %v, pending %d", err, c.Pending)
	}
	if c.Dispatched < 3 || c.ByOutcome[ledger.Censored] != c.Dispatched {
		t.Errorf("dispatched %d, censored %d: every stalled request should be censored at the drain deadline (%v)", c.Dispatched, c.ByOutcome[ledger.Censored], c.ByOutcome)
	}
	if took > 10*time.Second {
		t.Errorf("Run took %s to return with a 300ms drain", took)
	}
	time.Sleep(200 * time.Millisecond)
	if c2 := r.d.led.Counts(); c2.Planned != c.Planned {
		t.Errorf("planned %d → %d after Run returned", c.Planned, c2.Planned)
	}
	g := r.gathered(t)
	if v, _ := sum(g, "llmprobe_requests_total", "target", "t1", "outcome", "censored", "reason", "drain_deadline"); int(v) != c.ByOutcome[ledger.Censored] {
		t.Errorf("llmprobe_requests_total{censored} = %v, ledger %d", v, c.ByOutcome[ledger.Censored])
	}
	if v, _ := sum(g, "llmprobe_ledger_records_written_total"); int(v) != c.Finished {
		t.Errorf("ledger files: %v records written, %d finished", v, c.Finished)
	}
	lines := 0
	f, err := os.Open(filepath.Join(dir, "ledger.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"outcome"`) {
			lines++
		}
	}
	if lines != c.Finished {
		t.Errorf("ledger.jsonl holds %d records, %d finished", lines, c.Finished)
	}
}

// TestShutdownInterrupt: an interrupt during the drain cuts it short and
// what is in flight ends cancelled/interrupted.
func TestShutdownInterrupt(t *testing.T) {
	fake := newFakeTarget(t)
	fake.mode.Store(modeStall)
	interrupt, hard := context.WithCancel(context.Background())
	defer hard()
	r := startDaemon(t, loadConfig(t, configYAML("60s", slowTimeouts(targetYAML("t1", fake.url, 10, "")))),
		func(o *Options) { o.Interrupt = interrupt })
	waitFor(t, 5*time.Second, "stalled requests", func() bool { return r.d.group.InFlight() >= 3 })
	go func() {
		time.Sleep(200 * time.Millisecond)
		hard()
	}()
	start := time.Now()
	if err := r.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("Run took %s with a 60s drain interrupted after 200ms", took)
	}
	c := r.d.led.Counts()
	if err := r.d.led.Verify(); err != nil || c.Pending != 0 {
		t.Fatalf("ledger: verify %v, pending %d", err, c.Pending)
	}
	if c.Dispatched < 3 || c.ByOutcome[ledger.Cancelled] != c.Dispatched {
		t.Errorf("dispatched %d: want all cancelled/interrupted, got %v", c.Dispatched, c.ByOutcome)
	}
}
