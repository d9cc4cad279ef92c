package fleet

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// starvedHost is a host whose CPU pressure starved its prober.
func starvedHost() verdict.HostHealth {
	return verdict.HostHealth{Known: true, Pressure: 0.93, PressureKnown: true, Busy: 0.99, BusyKnown: true, HostCPUs: 2,
		RunWait: 0.41, RunWaitKnown: true, Window: time.Minute}
}

// quietHost is a host with CPU to spare.
func quietHost() verdict.HostHealth {
	return verdict.HostHealth{Known: true, Pressure: 0.01, PressureKnown: true, Busy: 0.1, BusyKnown: true, HostCPUs: 2,
		RunWait: 0.001, RunWaitKnown: true, Window: time.Minute}
}

// trueReports is every shard's checked report of step 1, each with host
// health hosts[shard] (nil: not measured).
func trueReports(t *testing.T, l *Ladder, hosts []*verdict.HostHealth) gathered {
	t.Helper()
	g := gathered{reports: map[int]*StepReport{}, missing: map[int]string{}}
	for shard, h := range hosts {
		var r StepReport
		if err := json.Unmarshal(benchReport(t, l, shard, 600), &r); err != nil {
			t.Fatal(err)
		}
		r.Host = h
		if err := l.checkReport(&r, "t-1", 1, shard); err != nil {
			t.Fatalf("shard %d: a true report refused: %v", shard, err)
		}
		g.reports[shard] = &r
	}
	return g
}

// TestFleetStepNamesShardHost (issue 17): each shard's host evidence
// travels with its report, and the merged step names a host cause with
// the shard it came from, as a prober alone's step does: a merged
// generator late on the one rule is host_starved "prober (shard 1) host
// starved: host CPU pressure 93%", not dispatch_lag with the host "not measured"; the shard
// rows carry each shard's evidence; a valid step carries the most
// pressed shard's.
func TestFleetStepNamesShardHost(t *testing.T) {
	starved, quiet := starvedHost(), quietHost()
	for _, tc := range []struct {
		name      string
		hosts     []*verdict.HostHealth
		late      bool
		wantCause cause.Cause
		wantIn    string
	}{
		{"late, shard 1 starved", []*verdict.HostHealth{&quiet, &starved}, true, cause.HostStarved, "prober (shard 1) host starved: host CPU pressure 93%"},
		{"late, shard 0 starved", []*verdict.HostHealth{&starved, &quiet}, true, cause.HostStarved, "prober (shard 0) host starved: host CPU pressure 93%"},
		{"late, quiet hosts", []*verdict.HostHealth{&quiet, &quiet}, true, cause.DispatchLag, "the host was not measurably starved"},
		{"late, not measured", []*verdict.HostHealth{nil, nil}, true, cause.DispatchLag, "not measured"},
		{"on time, shard 1 pressed", []*verdict.HostHealth{&quiet, &starved}, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := benchCoordinator(t, 2, 20)
			g := trueReports(t, l, tc.hosts)
			if tc.late { // a third of each shard's dispatches over the limit
				for _, r := range g.reports {
					r.All.LagOver = r.All.LagCount / 3
				}
			}
			step, _, rows := l.merge(1, g)
			v := step.Summary.Validity
			if tc.late {
				if v.Valid || len(v.Causes) != 1 || v.Causes[0].Cause != tc.wantCause || !strings.Contains(v.Causes[0].Reason, tc.wantIn) {
					t.Fatalf("merged step: valid %v, causes %+v; want %s naming %q", v.Valid, v.Causes, tc.wantCause, tc.wantIn)
				}
			} else if !v.Valid {
				t.Fatalf("an on-time merged step invalid: %v", v.Reasons())
			}
			for shard, h := range tc.hosts {
				want := ""
				if h != nil {
					want = "shard " + string(rune('0'+shard)) + ": host CPU "
				}
				if got := rows[shard].Host; !strings.HasPrefix(got, want) || (want == "") != (got == "") {
					t.Errorf("shard %d row host %q, want it to start %q", shard, got, want)
				}
			}
			if tc.hosts[1] != nil && tc.hosts[1] == &starved && v.Host.Source != "shard 1" {
				t.Errorf("merged host evidence from %q, want shard 1's (the most pressed)", v.Host.Source)
			}
		})
	}
}

// TestShardHostIsChecked: a shard's host evidence is bytes from a peer: a
// figure out of range refuses the report; its cgroup path is cleaned and
// bounded; its source is the coordinator's own name for the shard,
// whatever the shard wrote.
func TestShardHostIsChecked(t *testing.T) {
	l := benchCoordinator(t, 2, 20)
	for _, tc := range []struct {
		name string
		bad  func(h *verdict.HostHealth)
	}{
		{"NaN pressure", func(h *verdict.HostHealth) { h.Pressure = math.NaN() }},
		{"pressure over 1", func(h *verdict.HostHealth) { h.Pressure = 7 }},
		{"infinite run wait", func(h *verdict.HostHealth) { h.RunWait = math.Inf(1) }},
		{"throttled over periods", func(h *verdict.HostHealth) { h.Periods, h.Throttled = 5, 9 }},
		{"negative window", func(h *verdict.HostHealth) { h.Window = -time.Second }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r StepReport
			if err := json.Unmarshal(benchReport(t, l, 1, 600), &r); err != nil {
				t.Fatal(err)
			}
			h := starvedHost()
			tc.bad(&h)
			r.Host = &h
			if err := l.checkReport(&r, "t-1", 1, 1); err == nil || !strings.Contains(err.Error(), "host") {
				t.Errorf("host %+v: checked as %v, want refused", h, err)
			}
		})
	}
	var r StepReport
	if err := json.Unmarshal(benchReport(t, l, 1, 600), &r); err != nil {
		t.Fatal(err)
	}
	h := starvedHost()
	h.Cgroup = "v2 /\x1b[31mkubepods\u202e\n<script>" + strings.Repeat("x", 1<<20)
	h.Source = "shard 0 (trust me)"
	r.Host = &h
	if err := l.checkReport(&r, "t-1", 1, 1); err != nil {
		t.Fatalf("a true report with a hostile cgroup path refused: %v", err)
	}
	if got := r.Host.Cgroup; cleanText(got, maxCgroupBytes) != "" || strings.ContainsAny(got, "\x1b\n\u202e") {
		t.Errorf("cgroup path kept as %q", got)
	}
	if r.Host.Source != "shard 1" {
		t.Errorf("source %q, want the coordinator's own \"shard 1\"", r.Host.Source)
	}
}
