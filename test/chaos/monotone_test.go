package chaos

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCountersMonotoneUnderLoad (issue 28): the real `llmprobe run` under
// its baseline load is scraped many times back to back, and no counter,
// histogram count or sum of /metrics may go down between two scrapes:
// the request counters, the phase histograms and the counters read from
// the host (a float derived by subtraction once went 2570.8799999999997
// → 2570.879999999999, a false counter reset).
func TestCountersMonotoneUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a real llmprobe run scraped many times")
	}
	t.Parallel()
	key := newSentinel()
	binary(t)
	dir := t.TempDir()
	pr := &phaseRun{t: t, cfgPath: filepath.Join(dir, "llmprobe.yaml"), ledger: filepath.Join(dir, "ledger"),
		chaos: newHostile(t, "monotone", healthy), control: newHostile(t, "control", healthy)}
	var err error
	pr.p, pr.admin, err = startDaemon(t, key, pr.cfgPath, func(admin string) {
		pr.admin = admin
		_ = os.RemoveAll(pr.ledger)
		pr.write(pr.config(chaosTarget{url: pr.chaos.url(), api: "openai-chat", to: defaultTimeouts, enabled: true}, true))
	})
	if err != nil {
		t.Fatal(err)
	}
	const scrapes = 150
	for range scrapes {
		pr.scrape("under load") // fails on any counter that went down or vanished
	}
	s := pr.scrape("end")
	watched := []string{"llmprobe_requests_total", "llmprobe_http_connections_total"}
	if _, err := os.Stat("/proc/stat"); err == nil {
		watched = append(watched, "llmprobe_host_cpu_busy_seconds_total")
	}
	for _, name := range watched {
		if !s.has(name, nil) {
			t.Errorf("%s is not on /metrics: the test did not watch it", name)
		}
	}
	t.Logf("%d scrapes of %d monotone values, none went down", pr.scrapes, len(pr.prev))
}
