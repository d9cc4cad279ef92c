package daemon

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/logging"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestFailureLogSequence: the first failure after a success says so; more
// failures say nothing until the interval passed, then one summary (counts
// by outcome/reason since the last line); the first success after them says
// how long the target was down and how many failed. Ladder traffic,
// baseline planned during a ladder, and the prober's own outcomes (unsent,
// cancelled, censored) judge nothing.
func TestFailureLogSequence(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	base := func(o ledger.Outcome, r ledger.Reason) *ledger.Record {
		return &ledger.Record{Traffic: ledger.TrafficBaseline, Outcome: o, Reason: r}
	}
	ok := base(ledger.OK, ledger.ReasonStop)
	r503 := base(ledger.Rejected, ledger.ReasonStatus503)
	tmo := base(ledger.Timeout, ledger.ReasonHeaders)
	ladderFail := &ledger.Record{Traffic: ledger.TrafficLadder, Outcome: ledger.Rejected, Reason: ledger.ReasonStatus503}
	duringFail := &ledger.Record{Traffic: ledger.TrafficBaseline, During: ledger.DuringLadder, Outcome: ledger.Rejected, Reason: ledger.ReasonStatus503}
	unsent := base(ledger.Unsent, ledger.ReasonClientCap)
	steps := []struct {
		at   time.Duration
		rec  *ledger.Record
		want failureEvent
	}{
		{0, ok, failureEvent{}},
		{time.Second, ladderFail, failureEvent{}},
		{time.Second, duringFail, failureEvent{}},
		{time.Second, unsent, failureEvent{}},
		{2 * time.Second, r503, failureEvent{kind: failureStarted, rec: r503, failed: 1}},
		{10 * time.Second, r503, failureEvent{}},
		{20 * time.Second, tmo, failureEvent{}},
		{30 * time.Second, r503, failureEvent{}},
		{62 * time.Second, r503, failureEvent{kind: failureContinues, downFor: time.Minute, failed: 5, recent: 4,
			byReason: "rejected/status_503 ×3, timeout/headers ×1"}},
		{70 * time.Second, tmo, failureEvent{}},
		{time.Minute + 32*time.Second, unsent, failureEvent{}},
		{time.Minute + 32*time.Second, ok, failureEvent{kind: failureRecovered, downFor: time.Minute + 30*time.Second, failed: 6}},
		{100 * time.Second, ok, failureEvent{}},
		{101 * time.Second, tmo, failureEvent{kind: failureStarted, rec: tmo, failed: 1}},
	}
	var f failureLog
	for i, s := range steps {
		got := f.observe(t0.Add(s.at), t0.Add(s.at), time.Minute, s.rec)
		if fmt.Sprint(got) != fmt.Sprint(s.want) {
			t.Errorf("step %d (%s %s/%s): got %+v, want %+v", i, s.at, s.rec.Outcome, s.rec.Reason, got, s.want)
		}
	}
}

// TestOutageCountsFromPlannedSend simulates an outage: the first request
// to fail was planned 1 s in and timed out 10.5 s later; requests planned
// during the outage fail; the first success, planned at 21.2 s, is seen at
// 21.3 s. The target was down from the failing request's planned send (as
// latencies are counted from it), so down_for is 20.3 s, not the 9.8 s
// since the timeout was detected; the summaries count from there too.
func TestOutageCountsFromPlannedSend(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	base := func(o ledger.Outcome, r ledger.Reason) *ledger.Record {
		return &ledger.Record{Traffic: ledger.TrafficBaseline, Outcome: o, Reason: r}
	}
	ok, tmo := base(ledger.OK, ledger.ReasonStop), base(ledger.Timeout, ledger.ReasonFirstContent)
	steps := []struct {
		seen, planned float64
		rec           *ledger.Record
		want          failureEvent
	}{
		{0.1, 0, ok, failureEvent{}},
		{11.5, 1, tmo, failureEvent{kind: failureStarted, rec: tmo, failed: 1}},
		{12.5, 2, tmo, failureEvent{}},
		{13.5, 3, tmo, failureEvent{kind: failureContinues, downFor: 12500 * time.Millisecond, failed: 3, recent: 2, byReason: "timeout/first_content ×2"}},
		{21.3, 21.2, ok, failureEvent{kind: failureRecovered, downFor: 20300 * time.Millisecond, failed: 3}},
		// A slow failure planned before a success that was seen since:
		// the target was answering until that success, not down since
		// the failure's planned send.
		{25, 25, ok, failureEvent{}},
		{32, 22, tmo, failureEvent{kind: failureStarted, rec: tmo, failed: 1}},
		{33, 32.9, ok, failureEvent{kind: failureRecovered, downFor: 8 * time.Second, failed: 1}},
	}
	var f failureLog
	for i, s := range steps {
		got := f.observe(at(s.seen), at(s.planned), 2*time.Second, s.rec)
		if fmt.Sprint(got) != fmt.Sprint(s.want) {
			t.Errorf("step %d (seen %gs, planned %gs, %s): got %+v, want %+v", i, s.seen, s.planned, s.rec.Outcome, got, s.want)
		}
	}
}

// logLines parses JSON log lines.
func logLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func withMsg(lines []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// goDuration is a duration as the log writes it: "1.23s", "1m30s", never
// a bare number of nanoseconds.
var goDuration = regexp.MustCompile(`^(\d+h)?(\d+m)?(\d+(\.\d+)?(s|ms|µs|ns))?$`)

func durationField(t *testing.T, l map[string]any, key string) time.Duration {
	t.Helper()
	s, ok := l[key].(string)
	if !ok || s == "" || !goDuration.MatchString(s) {
		t.Fatalf("%s %v (%T) is not a Go duration string: %v", key, l[key], l[key], l)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDaemonSpeaksUpOnFailureAndRecovery runs the daemon, with the real
// logger, against a target that answers 503 for a while and then recovers:
// one "target failing" line (outcome, reason, status), summaries at most
// one an interval, and one "target recovered" line whose down_for is a
// readable duration covering the outage and whose failed count is every
// baseline failure the ledger saw.
func TestDaemonSpeaksUpOnFailureAndRecovery(t *testing.T) {
	f := newFakeTarget(t)
	f.mode.Store(mode503)
	var buf testutil.SyncBuffer
	log := logging.New(&buf, slog.LevelInfo, logging.FormatJSON)
	sink := &recSink{}
	cfg := loadConfig(t, configYAML("1s", targetYAML("t1", f.url, 20, "")))
	const every = 300 * time.Millisecond
	r := startDaemon(t, cfg, func(o *Options) {
		o.Logger, o.FailureLogEvery, o.Sinks = log, every, []ledger.Sink{sink}
	})
	const outage = 1200 * time.Millisecond
	time.Sleep(outage)
	f.mode.Store(modeOK)
	waitFor(t, 10*time.Second, "the recovered line", func() bool { return strings.Contains(buf.String(), `"msg":"target recovered"`) })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	lines := logLines(t, buf.String())
	defer func() {
		if t.Failed() {
			t.Log(buf.String())
		}
	}()
	started := withMsg(lines, "target failing")
	if len(started) != 1 {
		t.Fatalf("%d 'target failing' lines, want 1:\n%s", len(started), buf.String())
	}
	if s := started[0]; s["target"] != "t1" || s["outcome"] != "rejected" || s["reason"] != "status_503" || s["status"] != float64(503) || s["level"] != "WARN" {
		t.Errorf("failing line %v", s)
	}
	recovered := withMsg(lines, "target recovered")
	if len(recovered) != 1 {
		t.Fatalf("%d 'target recovered' lines, want 1", len(recovered))
	}
	down := durationField(t, recovered[0], "down_for")
	if down < outage-300*time.Millisecond || down > outage+5*time.Second {
		t.Errorf("down_for %s, want about the %s outage", down, outage)
	}
	failed := len(sink.where(func(s seen) bool { return s.traffic == ledger.TrafficBaseline && s.outcome == ledger.Rejected }))
	if got := recovered[0]["failed"]; got != float64(failed) || failed < 5 {
		t.Errorf("recovered line says %v failed; the ledger has %d rejected baseline records", got, failed)
	}
	// Rate-limited: no more summaries than intervals in the outage.
	summaries := withMsg(lines, "target still failing")
	if max := int(down/every) + 1; len(summaries) > max || len(summaries) == 0 {
		t.Errorf("%d summaries over %s with one at most every %s (want 1..%d)", len(summaries), down, every, max)
	}
	for _, s := range summaries {
		durationField(t, s, "down_for")
		if !strings.Contains(fmt.Sprint(s["by_reason"]), "rejected/status_503 ×") {
			t.Errorf("summary by_reason %v", s["by_reason"])
		}
	}
	// Every duration in every line is readable (the drain line's timeout too).
	for _, l := range lines {
		for _, k := range []string{"down_for", "timeout", "took", "step_duration"} {
			if _, ok := l[k]; ok {
				durationField(t, l, k)
			}
		}
	}
}

// TestDaemonSpeaksUpOnLadders: a ladder logs one line when it starts (its
// trigger, steps, rates and step duration) and one when it ends: its
// capacity with its bound and its knee when it finished, why it aborted
// when it aborted; every duration readable.
func TestDaemonSpeaksUpOnLadders(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    int32
		msg     string
		level   string
		capText string
	}{
		{"finished", modeOK, "ladder finished", "INFO", "≥ 10 req/s"},
		{"aborted", mode503, "ladder aborted", "WARN", "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeTarget(t)
			f.mode.Store(tc.mode)
			var buf testutil.SyncBuffer
			log := logging.New(&buf, slog.LevelInfo, logging.FormatJSON)
			ladderYAML := `    ladder:
      enabled: true
      run_on_start: true
      steps: [5, 10]
      step_duration: 1s
      gap: 0s
      max_rate: 50
      max_lag_p99: 1s
      abort: {rejection_fraction: 0.5}
`
			cfg := loadConfig(t, configYAML("1s", strings.Replace(targetYAML("t1", f.url, 1, ladderYAML), "baseline: {rate: 1, arrival: constant}", "baseline: {enabled: false}", 1)))
			r := startDaemon(t, cfg, func(o *Options) { o.Logger = log })
			waitFor(t, 20*time.Second, "the ladder's end line", func() bool { return strings.Contains(buf.String(), `"msg":"`+tc.msg+`"`) })
			if err := r.stop(t); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if t.Failed() {
					t.Log(buf.String())
				}
			}()
			lines := logLines(t, buf.String())
			start, end := withMsg(lines, "ladder started"), withMsg(lines, tc.msg)
			if len(start) != 1 || len(end) != 1 {
				t.Fatalf("%d start and %d end lines, want 1 and 1", len(start), len(end))
			}
			s := start[0]
			if s["target"] != "t1" || s["trigger"] != "start" || s["steps"] != float64(2) || s["rates_rps"] != "5,10" || s["step_duration"] != "1s" {
				t.Errorf("start line %v", s)
			}
			e := end[0]
			if e["level"] != tc.level || e["trigger"] != "start" || e["capacity"] != tc.capText || e["knee"] == nil {
				t.Errorf("end line %v: want level %s, capacity %q and a knee", e, tc.level, tc.capText)
			}
			took := durationField(t, e, "took")
			if tc.mode == mode503 {
				// Aborted inside its first step: no capacity figure at all.
				if reason, _ := e["abort_reason"].(string); !strings.Contains(reason, "step 1") || !strings.Contains(reason, "rejection") {
					t.Errorf("abort_reason %q does not say which step and why", reason)
				}
				if _, has := e["capacity_rps"]; has || took <= 0 || took > 2*time.Second {
					t.Errorf("end line %v (took %s): want no capacity_rps, within the first step", e, took)
				}
			} else {
				if e["capacity_bound"] != "lower" || e["capacity_rps"] != float64(10) || e["abort_reason"] != nil {
					t.Errorf("end line %v: want capacity 10 req/s, bound lower, no abort reason", e)
				}
				if took <= time.Second {
					t.Errorf("took %s: two steps of 1 s arrival windows took no longer than one", took)
				}
			}
		})
	}
}
