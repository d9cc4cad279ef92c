package statuspage

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestLadderSettleActivity: a ladder waiting for its target to settle says
// so on the card's activity line, with what it waits for (the previous
// ladder's requests, the baseline TTFT against its range, or the daemon's
// reason), since when and when it starts anyway; a running ladder is said
// before it.
func TestLadderSettleActivity(t *testing.T) {
	now := time.Date(2026, 12, 4, 23, 0, 0, 0, time.UTC)
	base := LadderSettle{Trigger: "identity_change", Since: now.Add(-time.Minute), Max: 5 * time.Minute}
	with := func(f func(*LadderSettle)) *LadderSettle { s := base; f(&s); return &s }
	for _, tc := range []struct {
		name string
		in   TargetInput
		want string
	}{
		{"in flight", TargetInput{Settle: with(func(s *LadderSettle) { s.LadderInFlight = 7 })},
			"waiting for the target to settle before the identity_change ladder (since 22:59 UTC; it starts anyway at 23:04 UTC, ladder.settle_max): 7 requests of the previous ladder still in flight"},
		{"slow baseline", TargetInput{Settle: with(func(s *LadderSettle) { s.BaselineTTFT, s.Limit = 2*time.Second, 150*time.Millisecond })},
			"waiting for the target to settle before the identity_change ladder (since 22:59 UTC; it starts anyway at 23:04 UTC, ladder.settle_max): baseline TTFT 2s above its normal range (up to 150ms)"},
		{"the identity, no limit", TargetInput{Settle: with(func(s *LadderSettle) { s.Max, s.Waiting = 0, SettleWait{Kind: SettleNoIdentity} })},
			"waiting for the target to settle before the identity_change ladder (since 22:59 UTC): the target's identity (model and version) is not known yet"},
		{"a failed baseline request", TargetInput{Settle: with(func(s *LadderSettle) {
			s.Waiting = SettleWait{Kind: SettleFailed, Failure: "transport_error/connection_refused"}
		})},
			"waiting for the target to settle before the identity_change ladder (since 22:59 UTC; it starts anyway at 23:04 UTC, ladder.settle_max): a baseline request failed (transport_error/connection_refused): the target is down or restarting"},
		{"too few answers", TargetInput{Settle: with(func(s *LadderSettle) { s.Waiting = SettleWait{Kind: SettleFew, Answers: 1, Need: 3} })},
			"waiting for the target to settle before the identity_change ladder (since 22:59 UTC; it starts anyway at 23:04 UTC, ladder.settle_max): 1 of 3 baseline answers since the target last changed"},
		{"a slow answer", TargetInput{Settle: with(func(s *LadderSettle) {
			s.Limit, s.Waiting = 150*time.Millisecond, SettleWait{Kind: SettleSlow, TTFT: 900 * time.Millisecond}
		})},
			"waiting for the target to settle before the identity_change ladder (since 22:59 UTC; it starts anyway at 23:04 UTC, ladder.settle_max): baseline TTFT 900ms above its normal range (up to 150ms)"},
		{"running first", TargetInput{Settle: &base, Ladder: &LadderProgress{Step: 2, Steps: 5, Rate: 6}}, "ladder step 2/5 at 6 req/s"},
	} {
		tc.in.Name, tc.in.Verdict = "t", verdict.Validity{Valid: true}
		if got := Build(Input{Now: now, Targets: []TargetInput{tc.in}}).Targets[0].State; got != tc.want {
			t.Errorf("%s: state %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestBufferedStreamsOnTheCard: a target whose streams an intermediary
// buffers says so on its card, with the count and the settings that
// cause it; a target without says nothing of it.
func TestBufferedStreamsOnTheCard(t *testing.T) {
	now := time.Date(2026, 12, 4, 22, 0, 0, 0, time.UTC)
	clean, held := NewMemory(), NewMemory()
	rec := func(buffered bool) *ledger.Record {
		return &ledger.Record{Target: "gw", Class: "c", Traffic: ledger.TrafficBaseline, Planned: 1, Dispatched: 2,
			FirstContent: 700 * time.Millisecond, End: 701 * time.Millisecond, ContentEvents: 32, Outcome: ledger.OK, Reason: ledger.ReasonStop, BufferedByIntermediary: buffered}
	}
	clean.Record(now, rec(false), stats.Gates{})
	held.Record(now, rec(false), stats.Gates{})
	held.Record(now.Add(time.Second), rec(true), stats.Gates{})
	in := Input{Now: now.Add(time.Minute), Targets: []TargetInput{
		{Name: "clean", Memory: clean, Verdict: verdict.Validity{Valid: true}},
		{Name: "held", Memory: held, Verdict: verdict.Validity{Valid: true}},
	}}
	st := Build(in)
	for _, ts := range st.Targets {
		switch ts.Name {
		case "clean":
			if ts.Path != "" {
				t.Errorf("clean target: path %q, want none", ts.Path)
			}
		case "held":
			for _, want := range []string{ledger.BufferedVerdict, "1 of 2 ok streams", "22:00 UTC", ledger.BufferedSettings} {
				if !strings.Contains(ts.Path, want) {
					t.Errorf("held target: path %q lacks %q", ts.Path, want)
				}
			}
		}
	}
	w := httptest.NewRecorder()
	Handler(func() Status { return st }, nil).ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if body := w.Body.String(); strings.Count(body, "the path to the model") != 1 || !strings.Contains(body, "1 of 2 ok streams") {
		t.Errorf("the page says the path finding %d times, want once (held's card)", strings.Count(body, "the path to the model"))
	}
}

// TestCapacityHistoryNamesIdentities: the card's capacity history names
// the identity each ladder measured where it changes, and a ladder a
// deploy cut as such: "16 (sim v1) · ≥ 6 (cut by a deploy) · 8 (sim v2)".
func TestCapacityHistoryNamesIdentities(t *testing.T) {
	now := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	res := func(c float64, bound ladderresult.Bound, version string, partial cause.Cause) ladder.Result {
		return ladder.Result{Finished: now, Identity: ladderresult.Identity{Model: "sim", Version: version}, Partial: partial,
			Verdict: ladderresult.Verdict{Capacity: c, CapacityStep: 1, CapacityBound: bound}}
	}
	m := NewMemory()
	m.AddLadder(res(16, ladderresult.BoundMeasured, "v1", ""))
	m.AddLadder(res(6, ladderresult.BoundLower, "v1", cause.IdentityChanged))
	m.AddLadder(res(8, ladderresult.BoundMeasured, "v2", ""))
	m.AddLadder(res(8, ladderresult.BoundMeasured, "v2", ""))
	st := Build(Input{Now: now, Targets: []TargetInput{{Name: "t", Memory: m, Verdict: verdict.Validity{Valid: true}}}})
	var got []string
	for _, p := range st.Targets[0].CapacityHistory {
		got = append(got, capacityPoint(p))
	}
	want := []string{"16 (sim v1)", "≥ 6 (cut by a deploy)", "8 (sim v2)", "8"}
	if strings.Join(got, " · ") != strings.Join(want, " · ") {
		t.Errorf("history %q, want %q", got, want)
	}
}
