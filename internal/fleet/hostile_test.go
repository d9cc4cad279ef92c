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
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// hostileText is what a hostile peer puts in a string: far too long,
// with terminal escapes, a bidi override and bytes that are not UTF-8.
var hostileText = strings.Repeat("A", 200_000) + "\x1b[31m\u202e\xff\xfe" + strings.Repeat("B", 200_000)

// hostileShort is hostile text still far over maxReasonBytes, for a view a
// shard must read within one poll (PollEvery) even on a starved host:
// three 400 KB fields took longer than that under -race and busy loops.
var hostileShort = strings.Repeat("A", 8_000) + "\x1b[31m\u202e\xff\xfe" + strings.Repeat("B", 8_000)

// cleanText reports what is wrong with s as text from a peer that reaches
// the history or a log line ("" when nothing).
func cleanText(s string, max int) string {
	switch {
	case len(s) > max:
		return fmt.Sprintf("%d bytes, above %d", len(s), max)
	case !utf8.ValidString(s):
		return "not UTF-8"
	case strings.ContainsAny(s, "\x1b\u202e"):
		return "a control character"
	}
	return ""
}

// TestGatherCleansRefusals: a report refused for what it holds is missing
// with why, and why quotes the report (an unknown outcome, a TTFT
// boundary): it reaches the history (shard_steps, the step's invalid
// reasons) and the logs bounded and cleaned, as every reason from a peer.
func TestGatherCleansRefusals(t *testing.T) {
	var l *Ladder
	var id string
	other := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == PathShard {
			_ = json.NewEncoder(w).Encode(ShardInfo{Identity: Identity{1, 2}, Instance: "fake"})
			return
		}
		all := stats.ShardSummary{LagLimitNS: int64(l.cfg.Validity.Limit()), Outcomes: map[ledger.Outcome]map[ledger.Reason]int{ledger.Outcome(hostileText): {ledger.Reason(hostileText): 0}}}
		rep := map[string]any{"ladder": id, "step": 1, "shard": 1, "shards": 2, "fingerprint": l.print, "rate": l.n.id.Rate(l.cfg.Steps[0]),
			"valid": true, "all": all, "classes": map[string]any{"chat": all}}
		b, err := json.Marshal(rep)
		if err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}
	l, _ = testCoordinator(t, []float64{20, 40}, other)
	id = "t-1"
	// a generous deadline: the hostile report is 800 KB, read under -race on a busy host
	g := l.gather(context.Background(), Announcement{ID: id, Target: "t", Steps: l.cfg.Steps}, 1, time.Now().Add(10*time.Second))
	why, ok := g.missing[1]
	if !ok || !strings.HasPrefix(why, "results refused: counts: ") {
		t.Fatalf("shard 1: %.200q, want its report refused for its counts", why)
	}
	if bad := cleanText(why, maxReasonBytes); bad != "" {
		t.Errorf("the refusal reached the reason uncleaned (%s): %.200q", bad, why)
	}
	step, _, rows := l.merge(1, g)
	for _, r := range append(step.Summary.Validity.Reasons(), rows[1].Missing) {
		if bad := cleanText(r, 2*maxReasonBytes); bad != "" {
			t.Errorf("a reason of the merged step is uncleaned (%s): %.200q", bad, r)
		}
	}
}

// TestFollowerCleansCoordinatorView: a shard reads the coordinator's
// ladder state as it reads anything from a peer. An announcement whose id
// is not its target and start (ids name URL paths and log lines) or whose
// state is unknown is ignored; the abort reason, which reaches the logs, a
// share's stop reason and the runner's abort reason ("fleet: " + reason),
// is cleaned and bounded.
func TestFollowerCleansCoordinatorView(t *testing.T) {
	start := time.Now().Add(time.Minute).Truncate(time.Millisecond)
	good := fmt.Sprintf("t-%d", start.UnixMilli())
	view := View{Identity: Identity{0, 2}, Instance: "c", Ladders: []Announcement{
		{ID: good, Target: "t", Start: start, State: StateAborted, Reason: hostileShort, Trigger: hostileShort, Fingerprint: hostileShort},
		{ID: "t-1/../../x" + hostileShort, Target: "t", Start: start.Add(time.Second), State: StateRunning},
		{ID: fmt.Sprintf("t-%d", start.Add(2*time.Second).UnixMilli()), Target: "t", Start: start.Add(2 * time.Second), State: hostileShort},
	}}
	coord := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case PathShard:
			_ = json.NewEncoder(w).Encode(ShardInfo{Identity: Identity{0, 2}, Instance: "c"})
		case PathLadders:
			_ = json.NewEncoder(w).Encode(view)
		default:
			http.NotFound(w, r)
		}
	}))
	defer coord.Close()
	n, err := NewNode(NodeOptions{Identity: Identity{1, 2}, Peers: Peers{URLs: []string{coord.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	// One poll has PollEvery to answer; a busy machine may need another
	// (the test is about what a read view holds, not how fast it is read).
	for try := 0; ; try++ {
		n.poll(context.Background())
		if n.viewErr == "" {
			break
		}
		if try == 20 {
			t.Fatalf("the view was not read in %d polls: %s", try+1, n.viewErr)
		}
		t.Logf("poll %d: %s (retrying)", try+1, n.viewErr)
		time.Sleep(PollEvery)
	}
	a, _, ok, _ := n.coordinatorView("t", "")
	if !ok || a.ID != good {
		t.Fatalf("latest ladder of t: %.100q (ok %v), want %s: the others are ill-formed", a.ID, ok, good)
	}
	for name, s := range map[string]string{"reason": a.Reason, "trigger": a.Trigger, "fingerprint": a.Fingerprint} {
		if bad := cleanText(s, maxReasonBytes); bad != "" {
			t.Errorf("the announcement's %s is uncleaned (%s): %.100q", name, bad, s)
		}
	}
	if len(n.view.Ladders) != 1 {
		t.Errorf("%d announcements kept, want the well-formed one only", len(n.view.Ladders))
	}
	if n.viewRefused == "" || len(n.viewRefused) > 2000 {
		t.Errorf("why announcements were ignored: %.200q, want it named and bounded", n.viewRefused)
	}
}
