package daemon

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/logging"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// failureStep is one step of a failureLog's life: a record seen at seen
// (planned at planned), or, when judge is set, the target's state judged
// at seen (failing: DOWN or FAILING) with the line it calls for.
type failureStep struct {
	seen, planned float64 // seconds
	rec           *ledger.Record
	judge         *bool
	want          failureEvent
}

var yes, no = func() *bool { b := true; return &b }(), func() *bool { b := false; return &b }()

func runFailureSteps(t *testing.T, every time.Duration, steps []failureStep) {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	var f failureLog
	for i, s := range steps {
		if s.judge == nil {
			f.observe(at(s.seen), at(s.planned), s.rec)
			continue
		}
		if got := f.judged(at(s.seen), *s.judge, every); fmt.Sprint(got) != fmt.Sprint(s.want) {
			t.Errorf("step %d (judged %v at %gs): got %+v, want %+v", i, *s.judge, s.seen, got, s.want)
		}
	}
}

// TestFailureLogSequence: the failing and recovered lines follow the
// target's state, not each record: a target that fails every other
// request speaks once when its state turns failing, at most one summary
// an interval while it stays so (counts since the last line), and once
// when the state recovers, with the episode's sent and failed counts by
// outcome/reason and the down time up to the first success after its
// last failure. Ladder traffic, baseline planned during a ladder, and the
// prober's own outcomes (unsent, cancelled, censored) count nothing.
func TestFailureLogSequence(t *testing.T) {
	base := func(o ledger.Outcome, r ledger.Reason) *ledger.Record {
		return &ledger.Record{Traffic: ledger.TrafficBaseline, Outcome: o, Reason: r}
	}
	ok := base(ledger.OK, ledger.ReasonStop)
	r503 := base(ledger.Rejected, ledger.ReasonStatus503)
	tmo := base(ledger.Timeout, ledger.ReasonHeaders)
	ladderFail := &ledger.Record{Traffic: ledger.TrafficLadder, Outcome: ledger.Rejected, Reason: ledger.ReasonStatus503}
	duringFail := &ledger.Record{Traffic: ledger.TrafficBaseline, During: ledger.DuringLadder, Outcome: ledger.Rejected, Reason: ledger.ReasonStatus503}
	unsent := base(ledger.Unsent, ledger.ReasonClientCap)
	runFailureSteps(t, time.Minute, []failureStep{
		{seen: 0, planned: 0, rec: ok},
		{seen: 1, planned: 1, rec: ladderFail}, {seen: 1, planned: 1, rec: duringFail}, {seen: 1, planned: 1, rec: unsent},
		{seen: 2, planned: 2, rec: r503}, {seen: 3, planned: 3, rec: ok}, // a success outside an episode starts the count afresh
		{seen: 4, planned: 4, rec: r503},
		{seen: 5, judge: no},
		{seen: 5, planned: 5, rec: tmo},
		{seen: 6, judge: yes, want: failureEvent{kind: failureStarted, rec: r503, sent: 2, failed: 2}},
		{seen: 7, planned: 7, rec: ok}, {seen: 8, planned: 8, rec: r503}, {seen: 9, planned: 9, rec: ok}, // flapping: no line
		{seen: 10, judge: yes},
		{seen: 30, planned: 30, rec: r503},
		{seen: 66, judge: yes, want: failureEvent{kind: failureContinues, downFor: 62 * time.Second, sent: 6, failed: 4, recent: 2, byReason: "rejected/status_503 ×2"}},
		{seen: 67, judge: yes},
		{seen: 70, planned: 70, rec: ok},
		{seen: 80, judge: no, want: failureEvent{kind: failureRecovered, downFor: 66 * time.Second, sent: 7, failed: 4, byReason: "rejected/status_503 ×3, timeout/headers ×1"}},
		{seen: 81, judge: no},
		{seen: 90, planned: 90, rec: tmo},
		{seen: 91, judge: yes, want: failureEvent{kind: failureStarted, rec: tmo, sent: 1, failed: 1}},
	})
}

// TestOutageCountsFromPlannedSend simulates an outage: the first request
// to fail was planned 1 s in and timed out 10.5 s later; requests planned
// during the outage fail; the first success, planned at 21.2 s, is seen at
// 21.3 s. The target was down from the failing request's planned send (as
// latencies are counted from it), so down_for is 20.3 s, not the 9.8 s
// since the timeout was detected, nor the time the state took to recover.
func TestOutageCountsFromPlannedSend(t *testing.T) {
	base := func(o ledger.Outcome, r ledger.Reason) *ledger.Record {
		return &ledger.Record{Traffic: ledger.TrafficBaseline, Outcome: o, Reason: r}
	}
	ok, tmo := base(ledger.OK, ledger.ReasonStop), base(ledger.Timeout, ledger.ReasonFirstContent)
	runFailureSteps(t, 2*time.Second, []failureStep{
		{seen: 0.1, planned: 0, rec: ok},
		{seen: 11.5, planned: 1, rec: tmo}, {seen: 12.5, planned: 2, rec: tmo}, {seen: 13.5, planned: 3, rec: tmo},
		{seen: 13.5, judge: yes, want: failureEvent{kind: failureStarted, rec: tmo, sent: 3, failed: 3}},
		{seen: 21.3, planned: 21.2, rec: ok},
		{seen: 300, judge: no, want: failureEvent{kind: failureRecovered, downFor: 20300 * time.Millisecond, sent: 4, failed: 3, byReason: "timeout/first_content ×3"}},
		// A slow failure planned before a success that was seen since:
		// the target was answering until that success, not down since
		// the failure's planned send.
		{seen: 305, planned: 305, rec: ok},
		{seen: 312, planned: 302, rec: tmo},
		{seen: 312, judge: yes, want: failureEvent{kind: failureStarted, rec: tmo, sent: 1, failed: 1}},
		{seen: 313, planned: 312.9, rec: ok},
		{seen: 320, judge: no, want: failureEvent{kind: failureRecovered, downFor: 8 * time.Second, sent: 2, failed: 1, byReason: "timeout/first_content ×1"}},
	})
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
// one "target failing" line (outcome, reason, status) when its state turns
// DOWN, summaries at most one an interval, and one "target recovered" line
// when its state recovers (the daemon's clock is moved past the state's
// 5-minute window: the same hysteresis as the state), whose down_for is a
// readable duration covering the outage, not the state's window, and
// whose failed count is every baseline failure the ledger saw.
func TestDaemonSpeaksUpOnFailureAndRecovery(t *testing.T) {
	f := newFakeTarget(t)
	f.mode.Store(mode503)
	var buf testutil.SyncBuffer
	log := logging.New(&buf, slog.LevelInfo, logging.FormatJSON)
	sink := &recSink{}
	cfg := loadConfig(t, configYAML("1s", targetYAML("t1", f.url, 20, "")))
	const every = 300 * time.Millisecond
	var skew atomic.Int64 // moves the daemon's wall clock forward
	r := startDaemon(t, cfg, func(o *Options) {
		o.Logger, o.FailureLogEvery, o.Sinks = log, every, []ledger.Sink{sink}
		o.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	})
	const outage = 1200 * time.Millisecond
	time.Sleep(outage)
	f.mode.Store(modeOK)
	waitFor(t, 10*time.Second, "a success after the outage", func() bool {
		return sink.count(func(s seen) bool { return s.traffic == ledger.TrafficBaseline && s.outcome == ledger.OK }) > 0
	})
	if strings.Contains(buf.String(), `"msg":"target recovered"`) {
		t.Errorf("recovered before the state did (its 5-minute window still holds the outage)")
	}
	skew.Store(int64(6 * time.Minute))
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
	if s := started[0]; s["target"] != "t1" || s["outcome"] != "rejected" || s["reason"] != "status_503" || s["status"] != float64(503) || s["level"] != "WARN" ||
		s["failed"].(float64) < 3 {
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
	if got := recovered[0]["failed"]; got != float64(failed) || failed < 5 || recovered[0]["sent"].(float64) <= float64(failed) ||
		!strings.Contains(fmt.Sprint(recovered[0]["by_reason"]), fmt.Sprintf("rejected/status_503 ×%d", failed)) {
		t.Errorf("recovered line %v; the ledger has %d rejected baseline records", recovered[0], failed)
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

// TestFlappingTargetSpeaksOnce: a target that fails about half its
// requests (the fake target switches between 503 and success every 100
// ms) is FAILING all along: one "target failing" line, no "target
// recovered" line, however often its requests alternate (the per-record
// lines once gave 28 lines in 70 s).
func TestFlappingTargetSpeaksOnce(t *testing.T) {
	f := newFakeTarget(t)
	var buf testutil.SyncBuffer
	log := logging.New(&buf, slog.LevelInfo, logging.FormatJSON)
	sink := &recSink{}
	cfg := loadConfig(t, configYAML("1s", targetYAML("t1", f.url, 20, "")))
	r := startDaemon(t, cfg, func(o *Options) { o.Logger, o.FailureLogEvery, o.Sinks = log, time.Hour, []ledger.Sink{sink} })
	for i := range 30 {
		f.mode.Store(int32(i%2) * mode503)
		time.Sleep(100 * time.Millisecond)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	lines := logLines(t, buf.String())
	isBase := func(o ledger.Outcome) func(seen) bool {
		return func(s seen) bool { return s.traffic == ledger.TrafficBaseline && s.outcome == o }
	}
	failed, ok := sink.count(isBase(ledger.Rejected)), sink.count(isBase(ledger.OK))
	if failed < 10 || ok < 10 {
		t.Skipf("the host ran too few requests to flap (%d failed, %d ok): nothing to judge", failed, ok)
	}
	if n, m := len(withMsg(lines, "target failing")), len(withMsg(lines, "target recovered")); n != 1 || m != 0 {
		t.Errorf("%d failing and %d recovered lines for a target failing %d of %d, want 1 and 0:\n%s", n, m, failed, failed+ok, buf.String())
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
