package statuspage

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/slo"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// rec is a baseline record of class c ending in o/r, its first token ttft
// after its planned send.
func stateRec(c string, o ledger.Outcome, r ledger.Reason, ttft time.Duration) *ledger.Record {
	return &ledger.Record{Target: "t1", Class: c, Traffic: ledger.TrafficBaseline, Outcome: o, Reason: r,
		Planned: time.Second, Dispatched: time.Second, Headers: time.Second + ttft, FirstContent: time.Second + ttft, End: 2*time.Second + ttft}
}

// TestTargetStateJudge: the state each traffic calls for, counted as the
// rules count it: a slow success is SLOW (never FAILING), unsent arrivals
// are no data (never FAILING), failures are FAILING, nothing ok is DOWN.
func TestTargetStateJudge(t *testing.T) {
	gates := stats.Gates{TTFT: 500 * time.Millisecond}
	for _, c := range []struct {
		name string
		feed func(add func(*ledger.Record))
		want slo.State
	}{
		{"nothing", func(func(*ledger.Record)) {}, slo.StateNoData},
		{"healthy", func(add func(*ledger.Record)) {
			for range 100 {
				add(stateRec("chat", ledger.OK, ledger.ReasonStop, 100*time.Millisecond))
			}
		}, slo.StateOK},
		{"slow but successful", func(add func(*ledger.Record)) {
			for range 100 {
				add(stateRec("chat", ledger.OK, ledger.ReasonStop, 2*time.Second))
			}
		}, slo.StateSlow},
		{"every arrival unsent (budget, cap)", func(add func(*ledger.Record)) {
			for i := range 100 {
				add(stateRec("chat", ledger.Unsent, []ledger.Reason{ledger.ReasonBudget, ledger.ReasonClientCap}[i%2], 0))
			}
		}, slo.StateNoData},
		{"stale connections and cancellations only fail nothing", func(add func(*ledger.Record)) {
			for i := range 100 {
				add(stateRec("chat", ledger.OK, ledger.ReasonStop, 100*time.Millisecond))
				if i%3 == 0 {
					add(stateRec("chat", ledger.TransportError, ledger.ReasonStaleConnection, 0))
					add(stateRec("chat", ledger.Cancelled, ledger.ReasonInjected, 0))
				}
			}
		}, slo.StateOK},
		{"a third rejected", func(add func(*ledger.Record)) {
			for i := range 90 {
				if i%3 == 0 {
					add(stateRec("chat", ledger.Rejected, ledger.ReasonStatus503, 0))
				} else {
					add(stateRec("chat", ledger.OK, ledger.ReasonStop, 100*time.Millisecond))
				}
			}
		}, slo.StateFailing},
		{"nothing succeeds", func(add func(*ledger.Record)) {
			for range 20 {
				add(stateRec("chat", ledger.TransportError, ledger.ReasonConnectionRefused, 0))
			}
		}, slo.StateDown},
	} {
		t.Run(c.name, func(t *testing.T) {
			sd, now := NewMemory(), time.Now()
			c.feed(func(r *ledger.Record) { sd.Record(now, r, gates) })
			got, classes := sd.Judge(now)
			if got != c.want {
				t.Errorf("state %s, want %s (%+v)", got, c.want, classes)
			}
		})
	}
}

// TestStatusSLOPerClass: the status page judges the SLO per class, as the
// shipped alerts do: a small class failing beside a large healthy one is
// burning, though the target's pooled ratio would be within budget.
func TestStatusSLOPerClass(t *testing.T) {
	sd := NewMemory()
	now := time.Now()
	rec := func(class string, o ledger.Outcome) *ledger.Record {
		return &ledger.Record{Target: "t1", Class: class, Traffic: ledger.TrafficBaseline, Outcome: o,
			Planned: time.Second, Dispatched: time.Second, Headers: 2 * time.Second, FirstContent: 2 * time.Second, End: 3 * time.Second}
	}
	for range 2000 {
		sd.Record(now, rec("big", ledger.OK), stats.Gates{})
	}
	for i := range 20 {
		o := ledger.OK
		if i < 10 {
			o = ledger.HTTPError
		}
		sd.Record(now, rec("small", o), stats.Gates{})
	}
	state, classes := sd.Judge(now)
	rows := sloRows(classes, nil)
	byName := map[string]SLORow{}
	for _, r := range rows {
		byName[r.SLI] = r
	}
	t.Logf("state %s; rows %+v", state, rows)
	if state != slo.StateFailing || classes[0].class != "small" {
		t.Errorf("target state %s led by class %q, want FAILING from the small class", state, classes[0].class)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want availability and latency for each of 2 classes", len(rows))
	}
	if r := byName["availability (failed / sent), class small"]; !r.Burning {
		t.Errorf("the small class with half its requests failing: %+v, want burning", r)
	}
	if r := byName["availability (failed / sent), class big"]; r.Burning || r.NoData {
		t.Errorf("the healthy class: %+v", r)
	}
	if one := sloRows([]ClassJudgement{{class: "default"}}, nil); len(one) != 2 || one[0].SLI != "availability (failed / sent)" {
		t.Errorf("one class: %+v, want rows naming no class", one)
	}
}

// TestBadgeCauses: the badge names causes briefly and links the evidence.
func TestBadgeCauses(t *testing.T) {
	for _, c := range []struct {
		causes         []cause.Cause
		names, anchors string
	}{
		{[]cause.Cause{cause.HostStarved}, "host", "#prober-host"},
		{[]cause.Cause{cause.CgroupThrottled, cause.DispatchLag}, "cgroup, lag", "#prober-host"},
		{[]cause.Cause{cause.InFlightCap}, "cap", "#generator-t1"},
		{nil, "unknown", "#generator-t1"},
	} {
		var ic []verdict.InvalidCause
		for _, x := range c.causes {
			ic = append(ic, verdict.InvalidCause{Cause: x})
		}
		if n, a := badgeCauses(ic, "t1"); n != c.names || a != c.anchors {
			t.Errorf("%v: %q %q, want %q %q", c.causes, n, a, c.names, c.anchors)
		}
	}
}
