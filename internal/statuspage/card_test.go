package statuspage

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/budget"
	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// feed records n copies of rec (class chat) into m at now.
func feed(m *Memory, now time.Time, n int, rec *ledger.Record, g stats.Gates) {
	for range n {
		r := *rec
		m.Record(now, &r, g)
	}
}

func failRec(o ledger.Outcome, r ledger.Reason, status int) *ledger.Record {
	rec := stateRec("chat", o, r, 0)
	rec.Status = status
	return rec
}

// abortedOnStarvedHost is a ladder the generator-invalid rule aborted at
// step 1, the step's verdict naming the starved host.
func abortedOnStarvedHost(at time.Time) *ladder.Result {
	step := ladderresult.LadderStep{Index: 1, Rate: 4, Aborted: true, AbortReason: ladder.ReasonGeneratorInvalid + ": host_starved"}
	step.Summary.Validity = verdict.Validity{Causes: []verdict.InvalidCause{{Cause: cause.HostStarved, Reason: "host CPU pressure 92 %"}}}
	return &ladder.Result{Started: at.Add(-time.Minute), Finished: at, Steps: []ladderresult.LadderStep{step}, Aborted: true,
		AbortReason: "step 1: " + step.AbortReason}
}

// TestCardStates: each state the card can show, from the facts that call
// for it, with its evidence and next step (the words a person reads
// first).
func TestCardStates(t *testing.T) {
	now := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	gate := stats.Gates{TTFT: 500 * time.Millisecond}
	gated := []ClassFacts{{Name: "chat", TTFT: gate.TTFT}}
	okRec := stateRec("chat", ledger.OK, ledger.ReasonStop, 100*time.Millisecond)
	starved := verdict.Validity{Causes: []verdict.InvalidCause{{Cause: cause.HostStarved, Reason: "host CPU pressure 92 %", Action: "give the prober CPU"}}}
	for _, tc := range []struct {
		name    string
		mem     func(*Memory)
		in      TargetInput
		started time.Time
		want    string
		figures []string
		next    string
	}{
		{name: "disabled by configuration", in: TargetInput{Configured: Configured{BaselineOff: true, Ladder: true}},
			want: StateDisabled, figures: []string{"baseline probing is off", "ladders still run"}, next: "baseline.enabled"},
		{name: "nothing answers", mem: func(m *Memory) {
			feed(m, now, 10, failRec(ledger.TransportError, ledger.ReasonConnectionRefused, 0), gate)
		},
			in:   TargetInput{Classes: gated, Failures: []Failure{{Outcome: "transport_error", Reason: "connection_refused"}}},
			want: StateDown, figures: []string{"none of 10 sent", "transport_error/connection_refused"}, next: "up and reachable"},
		{name: "401 on every request", mem: func(m *Memory) { feed(m, now, 10, failRec(ledger.HTTPError, ledger.ReasonUnauthorized, 401), gate) },
			in:   TargetInput{Classes: gated, Failures: []Failure{{Outcome: "http_error", Reason: "unauthorized", Status: 401, Error: "HTTP 401: invalid api key [REDACTED]"}}},
			want: StateRefused, figures: []string{"10 of 10 sent in the last 5 min refused", "(HTTP 401): HTTP 401: invalid api key"}, next: "refuses the prober's credentials (HTTP 401)"},
		{name: "a model it does not serve", mem: func(m *Memory) { feed(m, now, 10, failRec(ledger.HTTPError, ledger.ReasonNotFound, 404), gate) },
			in:   TargetInput{Classes: gated, Failures: []Failure{{Outcome: "http_error", Reason: "not_found", Status: 404}}},
			want: StateRefused, figures: []string{"(HTTP 404)"}, next: "configured model and url"},
		{name: "500 on every request answers: failing, not down", mem: func(m *Memory) { feed(m, now, 10, failRec(ledger.HTTPError, ledger.ReasonServerError, 500), gate) },
			in:   TargetInput{Classes: gated, Failures: []Failure{{Outcome: "http_error", Reason: "server_error", Status: 500, Error: "boom"}}},
			want: StateFailing, figures: []string{"10 of 10 sent in the last 5 min failed", "(HTTP 500): boom"}, next: "answers with errors"},
		{name: "slow: the gate beside the p99", mem: func(m *Memory) {
			feed(m, now, 100, stateRec("chat", ledger.OK, ledger.ReasonStop, 2*time.Second), gate)
		},
			in: TargetInput{Classes: gated}, want: StateSlow, figures: []string{"TTFT p99 2s", "against the gate 500ms", "100 of 100 first tokens over it"}, next: "queue and load"},
		{name: "capacity regressed across a deploy", mem: func(m *Memory) {
			feed(m, now, 100, okRec, gate)
			m.NoteIdentity(now.Add(-time.Hour), "sim", "v1")
			m.AddLadder(ladder.Result{Finished: now.Add(-50 * time.Minute), Verdict: ladderresult.Verdict{Capacity: 16, CapacityStep: 4, CapacityBound: ladderresult.BoundMeasured}})
			m.NoteIdentity(now.Add(-10*time.Minute), "sim", "v2")
			m.AddLadder(ladder.Result{Finished: now.Add(-5 * time.Minute), Verdict: ladderresult.Verdict{Capacity: 8, CapacityStep: 2, CapacityBound: ladderresult.BoundMeasured}})
		}, in: TargetInput{Classes: gated}, want: StateRegressed, figures: []string{"capacity 16 → 8 req/s", "50 %", "threshold is 80 %", "from sim v1 to sim v2"}, next: "roll back"},
		{name: "start-up ladder running", in: TargetInput{Classes: gated, Ladder: &LadderProgress{Step: 2, Steps: 4, Rate: 8, StepStarted: now, StepDuration: 30 * time.Second, Settle: 30 * time.Second}},
			want: StateLadder, figures: []string{"step 2 of 4 at 8 req/s", "held out of the SLO until about 21:02 UTC"}, next: "judged again"},
		{name: "budget spent", mem: func(m *Memory) { feed(m, now, 100, okRec, gate) },
			in:   TargetInput{Classes: gated, Budget: &budget.Remaining{TokensLimited: true, Tokens: 0, TokensUsed: 1000, RequestsUsed: 40, ResetAt: now.Add(3 * time.Hour)}},
			want: StateBlocked, figures: []string{"budget is spent (40 requests, 1000 tokens used)", "resumes at 00:00 UTC"}, next: "tokens_per_day"},
		{name: "aborted ladder on a starved host", in: TargetInput{Classes: gated, Verdict: starved, Last: abortedOnStarvedHost(now.Add(-time.Minute)), NextLadder: now.Add(time.Hour)},
			want: StateBlocked, figures: []string{"host CPU pressure 92 %", "aborted at step 1 because the prober host was starved (host_starved), not because of the target", "next ladder at 22:00 UTC (in 60m)"}, next: "give the prober CPU"},
		{name: "no data just after start", in: TargetInput{Classes: gated}, started: now.Add(-10 * time.Second),
			want: StateNoData, figures: []string{"since the daemon started at 20:59 UTC"}, next: "first baseline requests"},
		{name: "no data while the baseline settles", in: TargetInput{Classes: gated, Held: Held{Outside: 0, During: 16, Until: now.Add(2 * time.Minute)}},
			want: StateNoData, figures: []string{"held out of the SLO until 21:02 UTC", "16 of 16 baseline requests"}, next: "outside ladders"},
		{name: "one event, failed: too few, never OK", mem: func(m *Memory) { feed(m, now, 1, failRec(ledger.HTTPError, ledger.ReasonServerError, 500), gate) },
			in: TargetInput{Classes: gated, Configured: Configured{BaselineRate: 0.2}}, want: StateTooFew,
			figures: []string{"1 baseline requests sent in the last 60 min (1 failed); OK needs at least 41"}, next: "at baseline.rate 0.2 req/s the events it needs come in about 200s"},
		{name: "healthy", mem: func(m *Memory) { feed(m, now, 100, okRec, gate) }, in: TargetInput{Classes: gated},
			want: StateOK, figures: []string{"100 sent, 0 failed"}, next: "availability and latency are within their page tier"},
		{name: "healthy without a gate: no latency SLI claimed", mem: func(m *Memory) { feed(m, now, 100, okRec, stats.Gates{}) },
			in: TargetInput{Classes: []ClassFacts{{Name: "chat"}}}, want: StateOK, next: "No latency SLI: class chat has no TTFT gate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemory()
			if tc.mem != nil {
				tc.mem(m)
			}
			tc.in.Name, tc.in.Memory = "t1", m
			if tc.in.Verdict.Causes == nil {
				tc.in.Verdict.Valid = true
			}
			st := Build(Input{Now: now, Started: tc.started, Targets: []TargetInput{tc.in}})
			got := st.Targets[0].Target
			if got.State != tc.want {
				t.Fatalf("state %q, want %q (%+v)", got.State, tc.want, got)
			}
			for _, f := range tc.figures {
				if !strings.Contains(got.Figures, f) {
					t.Errorf("evidence %q lacks %q", got.Figures, f)
				}
			}
			if !strings.Contains(got.Next, tc.next) {
				t.Errorf("next step %q lacks %q", got.Next, tc.next)
			}
		})
	}
}

// TestRegressionComparesIdentities: a regression needs a measured
// capacity of a known identity below the alert's fraction of the previous
// identity's; a lower bound, an aborted ladder, the same identity or an
// unknown one is never compared.
func TestRegressionComparesIdentities(t *testing.T) {
	now := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	measured := func(c float64) ladder.Result {
		return ladder.Result{Finished: now, Verdict: ladderresult.Verdict{Capacity: c, CapacityStep: 1, CapacityBound: ladderresult.BoundMeasured}}
	}
	type ladderAt struct {
		version string
		res     ladder.Result
	}
	lower := measured(4)
	lower.CapacityBound = ladderresult.BoundLower
	aborted := measured(4)
	aborted.Aborted = true
	valid := ladderresult.LadderStep{Index: 1, Rate: 4}
	valid.Summary.Validity.Valid, valid.Summary.Planned = true, 20
	found := ladder.Result{Finished: now, Steps: []ladderresult.LadderStep{valid}} // a valid step failed its gates
	empty := valid                                                                 // valid, but its schedule drew no arrival (Poisson at 2 req/s for 2 s: 1.8 %)
	empty.Summary.Planned = 0
	drewNone := ladder.Result{Finished: now, Steps: []ladderresult.LadderStep{empty}}
	topped := measured(8) // a rule about the target ended it: how a ladder finds its top
	topped.Aborted, topped.Steps = true, []ladderresult.LadderStep{valid, {Index: 2, Rate: 12, Aborted: true, AbortReason: "TTFT p95 2.26s above 5 × gate 300ms"}}
	nothing := ladder.Result{Finished: now, Steps: []ladderresult.LadderStep{{Index: 1, Rate: 4}}} // no valid step
	cut := measured(6)                                                                             // a deploy cut it at step 2: a lower bound of v1, never compared
	cut.CapacityBound, cut.Partial, cut.Identity = ladderresult.BoundLower, cause.IdentityChanged, ladderresult.Identity{Model: "sim", Version: "v1"}
	beganOnV1 := measured(16) // noted after v2 was seen, but measured on v1 (its result says so)
	beganOnV1.Identity = ladderresult.Identity{Model: "sim", Version: "v1"}
	for _, tc := range []struct {
		name    string
		ladders []ladderAt
		want    bool
	}{
		{"halved across a deploy", []ladderAt{{"v1", measured(16)}, {"v2", measured(8)}}, true},
		{"within the threshold", []ladderAt{{"v1", measured(16)}, {"v2", measured(13)}}, false},
		{"same identity", []ladderAt{{"v1", measured(16)}, {"v1", measured(8)}}, false},
		{"a lower bound is not compared", []ladderAt{{"v1", measured(16)}, {"v2", lower}}, false},
		{"an aborted ladder is not compared", []ladderAt{{"v1", measured(16)}, {"v2", aborted}}, false},
		{"the previous identity's last measured ladder", []ladderAt{{"v1", measured(16)}, {"v1", aborted}, {"v2", measured(8)}, {"v2", measured(8)}}, true},
		{"an unknown identity is not compared", []ladderAt{{"", measured(16)}, {"v2", measured(8)}}, false},
		{"stopped by the target's rule: compared", []ladderAt{{"v1", measured(16)}, {"v2", topped}}, true},
		{"none found by a valid step: lost", []ladderAt{{"v1", measured(16)}, {"v2", found}}, true},
		{"no valid step: nothing to compare", []ladderAt{{"v1", measured(16)}, {"v2", nothing}}, false},
		{"a valid step with no arrival judged nothing", []ladderAt{{"v1", measured(16)}, {"v2", drewNone}}, false},
		{"a ladder a deploy cut is skipped: v1's last complete one is compared", []ladderAt{{"v1", measured(16)}, {"v2", cut}, {"v2", measured(8)}}, true},
		{"the identity the ladder measured, not the one noted", []ladderAt{{"v2", beganOnV1}, {"v2", measured(8)}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemory()
			for i, l := range tc.ladders {
				if l.version != "" {
					m.NoteIdentity(now.Add(time.Duration(i)*time.Minute), "sim", l.version)
				}
				m.AddLadder(l.res)
			}
			r := m.Regression(regressionFraction())
			if (r != nil) != tc.want {
				t.Fatalf("regression %+v, want %v", r, tc.want)
			}
			if r != nil && (r.Prev != 16 || (r.New != 8 && !r.NewNone) || r.PrevIdentity.Version != "v1" || r.NewIdentity.Version != "v2") {
				t.Errorf("regression %+v, want 16 → 8 (or none), v1 → v2", r)
			}
		})
	}
}

// TestAbortedCapacityNamesTheProber: a ladder the starved host aborted
// says so where the capacity stands, with the next ladder, never "no
// valid step met the gates".
func TestAbortedCapacityNamesTheProber(t *testing.T) {
	now := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	st := Build(Input{Now: now, Targets: []TargetInput{{Name: "t1", Verdict: verdict.Validity{Valid: true},
		Last: abortedOnStarvedHost(now.Add(-time.Minute)), NextLadder: now.Add(30 * time.Minute)}}})
	c := st.Targets[0].Capacity
	if !strings.Contains(c, "prober host was starved") || !strings.Contains(c, "next ladder at 21:30 UTC") || strings.Contains(c, "no valid step") {
		t.Errorf("capacity %q", c)
	}
}
