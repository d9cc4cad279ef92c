package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// okExec answers every request at once: ok, its first token 5 ms late.
func okExec(led *ledger.Ledger) dispatch.Exec {
	return func(_ context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		dispatched()
		now := led.Now()
		rec.Headers, rec.FirstContent, rec.LastContent, rec.ContentEvents = now, now+5*time.Millisecond, now+6*time.Millisecond, 1
		rec.End = now + 7*time.Millisecond
		return ledger.Result{Outcome: ledger.OK, Reason: ledger.ReasonStop}
	}
}

// testCoordinator is shard 0 of a fleet of two, served on loopback, whose
// shard 1 is the handler other.
func testCoordinator(t *testing.T, steps []float64, other http.HandlerFunc) (*Ladder, string) {
	t.Helper()
	var runner *ladder.Runner
	led := ledger.New(time.Now(), ledger.SinkFunc(func(r *ledger.Record) {
		if runner != nil {
			runner.Record(r)
		}
	}))
	g := dispatch.NewGroup(led)
	t.Cleanup(func() { g.Drain(context.Background(), time.Second) })
	id := Identity{0, 2}
	cfg := ladder.Config{Target: "t", Classes: []ladder.Class{{Name: "chat", Weight: 1, Gates: stats.Gates{TTFT: 100 * time.Millisecond}}},
		Steps: id.Rates(steps), StepDuration: time.Second, Gap: MinGap, MaxRate: 100, GoodFractionTarget: 0.5, KneeFactor: 2,
		StopAt: ladder.StopAtTop, Settle: 500 * time.Millisecond, Validity: verdict.ValidityConfig{MaxLagP99: 200 * time.Millisecond}}
	r, err := ladder.New(cfg, g, okExec(led))
	if err != nil {
		t.Fatal(err)
	}
	runner = r
	var h http.Handler
	self := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(self.Close)
	shard1 := httptest.NewServer(other)
	t.Cleanup(shard1.Close)
	n, err := NewNode(NodeOptions{Identity: id, Peers: Peers{URLs: []string{self.URL, shard1.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	h = n.Handler()
	l, err := n.NewLadder(LadderOptions{Steps: steps, Runner: r, LedgerNow: led.Now})
	if err != nil {
		t.Fatal(err)
	}
	l.Open()
	return l, self.URL
}

// TestCoordinatorRefusesBadShardResults: every byte from a peer is
// hostile until checked. A shard whose results are for another ladder
// configuration, whose counts cannot be true, or which refuses with a
// hostile error text, leaves its steps invalid (shard_missing, the refusal
// named, the text cleaned): the coordinator never merges them into a
// partial or false figure.
func TestCoordinatorRefusesBadShardResults(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a coordinator and a fake shard over loopback HTTP through a whole fleet ladder's real timetable")
	}
	var coordinator string
	other := func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == PathShard:
			_ = json.NewEncoder(w).Encode(ShardInfo{Identity: Identity{1, 2}, Instance: "fake"})
			return
		case strings.HasSuffix(r.URL.Path, "/live"):
			http.NotFound(w, r)
			return
		}
		var step int
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, PathLadders+"/"), "/") // {id}/steps/{step}
		if len(parts) != 3 {
			http.NotFound(w, r)
			return
		}
		id := parts[0]
		if _, err := fmt.Sscan(parts[2], &step); err != nil {
			http.NotFound(w, r)
			return
		}
		if step == 3 {
			writeError(w, http.StatusConflict, "refused\x1b[31m: \u202enot me")
			return
		}
		// Shard 0's own report for the step, passed off as shard 1's.
		var rep StepReport
		resp, err := http.Get(fmt.Sprintf("%s%s/%s/steps/%d", coordinator, PathLadders, id, step))
		if err != nil || resp.StatusCode != http.StatusOK {
			if resp != nil {
				w.WriteHeader(resp.StatusCode)
				resp.Body.Close()
			}
			return
		}
		_ = json.NewDecoder(resp.Body).Decode(&rep)
		resp.Body.Close()
		rep.Shard = 1
		switch step {
		case 1:
			rep.Fingerprint = "0123456789abcdef"
		case 2:
			rep.All.Dispatched += 5
		}
		writeJSON(w, http.StatusOK, rep)
	}
	l, self := testCoordinator(t, []float64{20, 40, 60}, other)
	coordinator = self
	res, err := l.Coordinate(context.Background(), "manual")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"results refused: ladder fingerprint", "results refused: counts: ", "refused"}
	if len(res.Steps) != 3 {
		t.Fatalf("%d steps: %+v", len(res.Steps), res.Steps)
	}
	for i, s := range res.Steps {
		reasons := strings.Join(s.Summary.Validity.Reasons(), "; ")
		t.Logf("step %d: valid %v, planned %d, %s", s.Index, s.Summary.Validity.Valid, s.Summary.Planned, reasons)
		if s.Summary.Validity.Valid || len(s.Summary.Validity.Causes) != 1 || s.Summary.Validity.Causes[0].Cause != cause.ShardMissing ||
			!strings.Contains(reasons, "shard 1: no results: "+want[i]) {
			t.Errorf("step %d: want invalid, shard 1 missing (%s)", s.Index, want[i])
		}
		if strings.ContainsAny(reasons, "\x1b\u202e") {
			t.Errorf("step %d: the shard's text reached the reason uncleaned: %q", s.Index, reasons)
		}
	}
	if res.CapacityStep != 0 || res.Scope != ScopeFleet || res.Shards != 2 || len(res.ShardSteps) != 6 {
		t.Errorf("capacity step %d from invalid steps; scope %q, shards %d, %d shard rows", res.CapacityStep, res.Scope, res.Shards, len(res.ShardSteps))
	}
	for _, row := range res.ShardSteps {
		if row.Shard == 0 && (row.Missing != "" || !(row.Valid || hostOnly(row.InvalidCauses)) || row.Planned == 0) {
			t.Errorf("shard 0's own share of step %d: %+v", row.Step, row)
		}
	}
}

// TestNextStart: the next step starts ladder.gap after every shard's
// results are in (at least AnnounceLead ahead), never later than the
// timetable; with a shard's results missing, on the timetable.
func TestNextStart(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	const period = 25 * time.Second // 3s step + 20s settle + 2s gap
	a := Announcement{Start: t0, StepStarts: []time.Time{t0}}
	all := gathered{reports: map[int]*StepReport{0: {}, 1: {}}}
	one := gathered{reports: map[int]*StepReport{0: {}}, missing: map[int]string{1: "not found"}}
	tests := []struct {
		name string
		gap  time.Duration
		now  time.Duration // after step 1's start
		g    gathered
		want time.Duration // step 2's start, after step 1's
	}{
		{"results in early: the gap after them", 3 * time.Second, 4 * time.Second, all, 7 * time.Second},
		{"a gap shorter than the announcement's lead", time.Second, 4 * time.Second, all, 4*time.Second + AnnounceLead},
		{"results in late: never after the timetable", 3 * time.Second, 23 * time.Second, all, period},
		{"a shard's results missing: the timetable", 3 * time.Second, 4 * time.Second, one, period},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &Ladder{n: &Node{id: Identity{0, 2}, now: func() time.Time { return t0.Add(tt.now) }},
				cfg: ladder.Config{Gap: tt.gap}, period: period}
			if got := l.nextStart(a, 1, tt.g).Sub(t0); got != tt.want {
				t.Errorf("step 2 at %v after step 1, want %v", got, tt.want)
			}
		})
	}
	// A step not yet allowed is placed a period after the last announced
	// start, and an announced start is used as it is.
	b := Announcement{Start: t0, StepStarts: []time.Time{t0, t0.Add(7 * time.Second)}}
	l := &Ladder{period: period}
	if got := l.stepStart(b, 2).Sub(t0); got != 7*time.Second {
		t.Errorf("step 2 at %v, want the announced 7s", got)
	}
	if got := l.stepStart(b, 4).Sub(t0); got != 7*time.Second+2*period {
		t.Errorf("step 4 at %v, want 7s + 2 periods", got)
	}
}

// TestGatherEndsByItsDeadline: the coordinator must publish its decision
// DecisionLead before the next step, or the shards stop for want of a
// go-ahead. A shard it has to find again (forgotten after a transport
// error) sends it to the peers' DNS name; a lookup that hangs must not
// hold the gather past its deadline: the shard is missing, named, and the
// gather returns.
func TestGatherEndsByItsDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	lookupEnded := make(chan error, 1)
	slow := func(ctx context.Context, _ string) ([]string, error) {
		select {
		case <-ctx.Done():
			lookupEnded <- ctx.Err()
			return nil, ctx.Err()
		case <-release: // the test is over
			return nil, fmt.Errorf("released")
		}
	}
	n, err := NewNode(NodeOptions{Identity: Identity{0, 2}, Peers: Peers{DNS: "llmprobe.fleet", Port: 9464, Lookup: slow}})
	if err != nil {
		t.Fatal(err)
	}
	l := &Ladder{n: n, cfg: ladder.Config{Target: "t", Steps: []float64{1, 2}}, shares: map[string]*share{}}
	a := Announcement{ID: "t-1", Target: "t", Steps: []float64{1, 2}}
	done := make(chan gathered, 1)
	go func() { done <- l.gather(context.Background(), a, 1, time.Now().Add(300*time.Millisecond)) }()
	var g gathered
	select {
	case g = <-done:
	case <-time.After(20 * time.Second): // generous: the deadline was 300 ms
		t.Fatal("gather still running 20 s after its deadline: the DNS lookup held it")
	}
	if err := <-lookupEnded; err == nil {
		t.Error("the lookup did not end with the gather's deadline")
	}
	if len(g.reports) != 0 || !strings.Contains(g.missing[1], "not found among the peers") || !strings.Contains(g.missing[1], "deadline") {
		t.Errorf("shard 1: %q, want it missing, the lookup cut short by the deadline named", g.missing[1])
	}
}

// hostOnly reports whether a shard's share was invalid only for its host
// (a busy machine): a test that needs an on-schedule generator accepts it.
func hostOnly(causes []string) bool {
	for _, c := range causes {
		if !cause.Cause(c).IsHost() {
			return false
		}
	}
	return len(causes) > 0
}
