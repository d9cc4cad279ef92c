package daemon

import (
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestFaults runs the daemon against a target that is down, stalls,
// resets its connections or answers 503 for a while, then recovers. The
// baseline keeps its schedule through the fault (planned ≈ rate × elapsed,
// whatever the responses do), the fault's arrivals end with the right
// outcomes in the ledger and in /metrics, ok outcomes return once the
// target does, and the ledger has no holes.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: seconds of each fault (down, stalled, resetting, 503) and the recovery, against real sockets")
	}
	const rate = 20.0
	type outcome struct {
		o ledger.Outcome
		r ledger.Reason
	}
	cases := []struct {
		name string
		mode int32 // fake target mode during the fault (down: no server at all)
		down bool
		want []outcome
	}{
		{name: "down", down: true, want: []outcome{{ledger.TransportError, ledger.ReasonConnectionRefused}}},
		{name: "stalled", mode: modeStall, want: []outcome{{ledger.Timeout, ledger.ReasonHeaders}}},
		{name: "resetting", mode: modeReset, want: []outcome{
			{ledger.TransportError, ledger.ReasonConnectionReset}, {ledger.StreamError, ledger.ReasonTruncated}}},
		{name: "503", mode: mode503, want: []outcome{{ledger.Rejected, ledger.ReasonStatus503}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var url string
			var recoverTarget func()
			if tc.down {
				// A closed port now; a server listens there at recovery.
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := l.Addr().String()
				_ = l.Close()
				url = "http://" + addr + "/v1"
				recoverTarget = func() {
					f := &fakeTarget{stop: make(chan struct{})}
					f.model.Store("fake-model")
					f.root.Store("build-1")
					var l2 net.Listener
					waitFor(t, 5*time.Second, "re-listen on "+addr, func() bool {
						var err error
						l2, err = net.Listen("tcp", addr)
						return err == nil
					})
					srv := httptest.NewUnstartedServer(f)
					_ = srv.Listener.Close()
					srv.Listener = l2
					srv.Start()
					t.Cleanup(func() { close(f.stop); srv.Close() })
				}
			} else {
				f := newFakeTarget(t)
				f.mode.Store(tc.mode)
				url = f.url
				recoverTarget = func() { f.mode.Store(modeOK) }
			}
			sink := &recSink{}
			cfg := loadConfig(t, configYAML("1s", targetYAML("t1", url, rate, "")))
			wallStart := time.Now()
			r := startDaemon(t, cfg, func(o *Options) { o.Sinks = []ledger.Sink{sink} })
			faultStart := r.d.led.Now()

			// The fault: long enough for a dozen requests to start and end
			// inside it (a stalled one times out after headers 400ms).
			time.Sleep(2 * time.Second)
			faultEnd := r.d.led.Now()
			recoverTarget()
			recovered := r.d.led.Now()
			time.Sleep(1500 * time.Millisecond)

			fams := r.metrics(t)
			faulty := 0.0
			for _, w := range tc.want {
				v, _ := sum(fams, "llmprobe_requests_total", "target", "t1", "outcome", string(w.o), "reason", string(w.r))
				faulty += v
			}
			if faulty < 1 {
				t.Errorf("/metrics llmprobe_requests_total has no %v outcome after the fault", tc.want)
			}
			if err := r.stop(t); err != nil {
				t.Fatalf("Run: %v", err)
			}
			elapsed := time.Since(wallStart)

			c := r.d.led.Counts()
			if err := r.d.led.Verify(); err != nil || c.Pending != 0 {
				t.Fatalf("ledger: verify %v, pending %d", err, c.Pending)
			}
			// Open loop: the schedule does not wait for responses.
			if want := rate * elapsed.Seconds(); float64(c.Planned) < 0.75*want || float64(c.Planned) > want+2 {
				t.Errorf("planned %d arrivals in %s at %g req/s, want ≈ %.0f (the schedule must not slow down on failures)", c.Planned, elapsed, rate, want)
			}

			// The fault's requests: planned after it began and ended before
			// the target recovered. A request that was still in flight at
			// the recovery may meet either behaviour: on a loaded host a
			// stalled request's headers timer can fire after the recovered
			// server answered, and it ends first_content.
			during := sink.where(func(s seen) bool {
				return s.target == "t1" && s.planned >= faultStart && s.end > 0 && s.end <= faultEnd && s.outcome != ledger.Unsent
			})
			t.Logf("during the fault: %s; planned %d in %s", summarize(during), c.Planned, elapsed.Round(time.Millisecond))
			if len(during) < 10 {
				t.Fatalf("only %d requests sent during the fault", len(during))
			}
			for _, s := range during {
				ok := false
				for _, w := range tc.want {
					ok = ok || (s.outcome == w.o && s.reason == w.r)
				}
				if !ok {
					t.Errorf("during the fault: %s/%s, want one of %v", s.outcome, s.reason, tc.want)
					break
				}
			}
			// Recovery: arrivals planned a little after the target came back are ok.
			after := sink.where(func(s seen) bool { return s.planned >= recovered+500*time.Millisecond })
			okAfter := 0
			for _, s := range after {
				if s.outcome == ledger.OK {
					okAfter++
				}
			}
			if len(after) < 5 || okAfter < len(after)*8/10 {
				t.Errorf("after recovery %d of %d requests ok, want most: %s", okAfter, len(after), summarize(after))
			}
			// /metrics agrees with the ledger: one terminal outcome per record.
			final := r.gathered(t)
			total, _ := sum(final, "llmprobe_requests_total", "target", "t1")
			if int(total) != c.Finished {
				t.Errorf("llmprobe_requests_total sums to %v, the ledger finished %d", total, c.Finished)
			}
			planned, _ := sum(final, "llmprobe_requests_planned_total", "target", "t1")
			if int(planned) != c.Planned {
				t.Errorf("llmprobe_requests_planned_total = %v, the ledger planned %d", planned, c.Planned)
			}
		})
	}
}

// summarize counts records by outcome/reason, for failure messages.
func summarize(recs []seen) string {
	m := map[string]int{}
	for _, s := range recs {
		m[string(s.outcome)+"/"+string(s.reason)]++
	}
	var b strings.Builder
	for k, v := range m {
		fmt.Fprintf(&b, "%s=%d ", k, v)
	}
	return b.String()
}
