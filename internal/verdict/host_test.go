package verdict

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestHostEvidenceNamesTheCause: a late generator on a host showing each
// piece of evidence is a host cause named with its figures, and never
// advised to spin; dispatch_lag advises --spin only where the host had a
// CPU to spare.
func TestHostEvidenceNamesTheCause(t *testing.T) {
	late := Evidence{Mode: ledger.ModeOpen, LagCount: 100, LagOver: 10, LagP99: 30 * ms}
	idle := HostHealth{Known: true, Busy: 0.10, BusyKnown: true, HostCPUs: 4, Pressure: 0.01, PressureKnown: true,
		ThrottleKnown: true, RunWait: 0.001, RunWaitKnown: true}
	with := func(f func(*HostHealth)) HostHealth { h := idle; f(&h); return h }
	for _, tc := range []struct {
		name  string
		cfg   ValidityConfig
		host  HostHealth
		want  cause.Cause
		texts []string
		spin  bool // the advice suggests --spin
	}{
		{"spare CPU", ValidityConfig{}, idle, cause.DispatchLag, []string{"host CPU 10% busy of 4 CPUs", "not measurably starved"}, true},
		{"host CPU pressure", ValidityConfig{}, with(func(h *HostHealth) { h.Pressure = 0.92 }), cause.HostStarved,
			[]string{"prober host starved: host CPU pressure 92%"}, false},
		{"pressure below its threshold", ValidityConfig{}, with(func(h *HostHealth) { h.Pressure = 0.19 }), cause.DispatchLag,
			[]string{"host CPU pressure 19%", "not measurably starved"}, true},
		{"pressure threshold configured", ValidityConfig{StarvedPressure: 0.5}, with(func(h *HostHealth) { h.Pressure = 0.4 }), cause.DispatchLag,
			[]string{"host CPU pressure 40%"}, true},
		{"cgroup pressure", ValidityConfig{}, with(func(h *HostHealth) { h.CgroupPressure, h.CgroupPressureKnown = 0.8, true }), cause.HostStarved,
			[]string{"cgroup CPU pressure 80%"}, false},
		{"throttled", ValidityConfig{}, with(func(h *HostHealth) {
			h.Periods, h.Throttled, h.ThrottledTime, h.Quota = 50, 41, 2900*ms, 0.5
		}), cause.CgroupThrottled, []string{"prober CPU-throttled by its cgroup quota: cgroup throttled 41 of 50 periods, 2.9s (quota 0.5 CPU)"}, false},
		{"throttled in 1 of 100 periods", ValidityConfig{}, with(func(h *HostHealth) { h.Periods, h.Throttled, h.Quota = 100, 1, 0.5 }),
			cause.DispatchLag, []string{"cgroup throttled 1 of 100 periods"}, false},
		{"prober at its quota", ValidityConfig{}, with(func(h *HostHealth) {
			h.Quota, h.Periods, h.ProcessCPU, h.ProcessCPUKnown, h.CPUs = 0.5, 100, 0.48, true, 4
		}), cause.CgroupThrottled, []string{"the prober used 0.48 of its 0.5 CPU quota"}, false},
		{"run-queue wait", ValidityConfig{}, with(func(h *HostHealth) { h.RunWait = 0.35 }), cause.HostStarved,
			[]string{"prober threads waited runnable 35% of the window"}, false},
		{"run-queue wait over the window", ValidityConfig{}, with(func(h *HostHealth) { h.RunWait = 1.734 }), cause.HostStarved,
			[]string{"prober threads waited runnable 1.73× the window (summed over threads)"}, false},
		{"busy host", ValidityConfig{}, with(func(h *HostHealth) { h.Busy = 0.98 }), cause.HostStarved,
			[]string{"host CPU 98% busy of 4 CPUs"}, false},
		{"no idle CPU though under the busy threshold", ValidityConfig{}, with(func(h *HostHealth) { h.Busy, h.HostCPUs = 0.6, 2 }),
			cause.DispatchLag, []string{"host CPU 60% busy of 2 CPUs"}, false},
		{"not measured", ValidityConfig{}, HostHealth{}, cause.DispatchLag, []string{"not measured"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := late
			e.Host = tc.host
			v := tc.cfg.Judge(e)
			if v.Valid || len(v.Causes) != 1 || v.Causes[0].Cause != tc.want {
				t.Fatalf("causes %+v, want %s", v.Causes, tc.want)
			}
			for _, text := range tc.texts {
				if !strings.Contains(v.Reasons()[0], text) {
					t.Errorf("reason %q lacks %q", v.Reasons()[0], text)
				}
			}
			advice := v.Causes[0].Action
			if spin := strings.Contains(advice, "(--spin") && !strings.Contains(advice, "not advised") && !strings.Contains(advice, "do not spin"); spin != tc.spin {
				t.Errorf("advice %q: suggests --spin %v, want %v", advice, spin, tc.spin)
			}
		})
	}
}

// TestHostHealthString names every figure known and nothing unknown.
func TestHostHealthString(t *testing.T) {
	h := HostHealth{Known: true, Busy: 0.98, BusyKnown: true, HostCPUs: 2, Pressure: 0.92, PressureKnown: true,
		ThrottleKnown: true, Periods: 50, Throttled: 41, ThrottledTime: 2900 * ms, Quota: 0.5, RunWait: 0.35, RunWaitKnown: true}
	want := "host CPU 98% busy of 2 CPUs, host CPU pressure 92%, cgroup throttled 41 of 50 periods, 2.9s (quota 0.5 CPU), prober threads waited runnable 35% of the window"
	if got := h.String(); got != want {
		t.Errorf("String() = %q\nwant       %q", got, want)
	}
	if got := (HostHealth{Known: true, ThrottleKnown: true}).String(); got != "no cgroup CPU quota" {
		t.Errorf("root cgroup: %q", got)
	}
	if got := (HostHealth{Known: true}).String(); got != "host health not measured" {
		t.Errorf("nothing known: %q", got)
	}
}

// TestHostCauseActionsNeverSpin: the advice of a host cause never
// suggests spinning, which burns the CPU a starved prober lacks.
func TestHostCauseActionsNeverSpin(t *testing.T) {
	for _, c := range []cause.Cause{cause.HostStarved, cause.CgroupThrottled} {
		if a := c.Action(); !strings.Contains(a, "do not spin-wait") {
			t.Errorf("%s: advice %q does not warn against --spin", c, a)
		}
	}
}
