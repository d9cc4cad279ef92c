package wiring

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/telemetry"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// sessionTarget is a target at base with one session class of turns turns.
func sessionTarget(t *testing.T, base string, turns int) config.Target {
	t.Helper()
	c, err := Load(config.Options{BuiltIn: []byte(fmt.Sprintf(`targets:
  - name: t1
    url: %s
    model: m
    baseline: {seed: 3, arrival: constant}
    classes:
      - name: chat
        input: {dist: fixed, value: 200}
        output: {dist: fixed, value: 8}
        session: {turns: %d, think: 20ms}
`, base, turns)), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	return c.Targets[0]
}

// ledgerSessions reads a probe's JSONL ledger: records by session, then
// by turn (first attempts).
func ledgerSessions(t *testing.T, path string) map[uint64]map[int]ledger.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[uint64]map[int]ledger.Record{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r ledger.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.ID == 0 {
			continue // the run header
		}
		if r.Session == 0 || r.Turn == 0 {
			t.Fatalf("record %d has no session/turn", r.ID)
		}
		if out[r.Session] == nil {
			out[r.Session] = map[int]ledger.Record{}
		}
		if _, dup := out[r.Session][r.Turn]; dup {
			t.Fatalf("session %d turn %d recorded twice", r.Session, r.Turn)
		}
		out[r.Session][r.Turn] = r
	}
	return out
}

// TestSessionProbeAgainstSimulator: a probe of a session class against the
// simulator leaves every turn of every session in the ledger, per-turn
// figures in the summary, and later turns that re-send the history are
// served mostly from the simulator's prefix cache (turn 1, a fresh prompt,
// is not), so their TTFT is below turn 1's prefill-bound one.
func TestSessionProbeAgainstSimulator(t *testing.T) {
	const turns = 4
	cfg := sim.DefaultConfig()
	cfg.TTFT = sim.FixedDist(0.001)
	cfg.TokenTime = sim.FixedDist(0.001)
	cfg.OutputTokens = sim.FixedDist(8)
	cfg.PrefillPerToken = time.Millisecond
	base := testutil.StartSim(t, cfg)
	st := sessionTarget(t, base, turns)
	st.Baseline.Rate = 10
	p, err := NewPlan(st, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	res, err := p.Probe(context.Background(), ProbeRun{Window: time.Second, Drain: 20 * time.Second, LedgerPath: path})
	if err != nil || res.LedgerErr != nil {
		t.Fatalf("probe: %v, ledger: %v", err, res.LedgerErr)
	}
	if n := p.LiveSessions(0); n != 0 {
		t.Errorf("%d sessions still hold state after the run", n)
	}
	byS := ledgerSessions(t, path)
	if len(byS) != 10 {
		t.Errorf("%d sessions, want 10 (10/s over 1s)", len(byS))
	}
	for id, ts := range byS {
		if len(ts) != turns {
			t.Errorf("session %d: %d turns recorded, want %d", id, len(ts), turns)
		}
		for k, r := range ts {
			if r.Outcome != ledger.OK {
				t.Errorf("session %d turn %d: %s/%s", id, k, r.Outcome, r.Reason)
			}
		}
	}
	s := res.Summary
	if testing.Verbose() {
		for _, tf := range s.Turns {
			t.Logf("turn %d: %+v", tf.Turn, tf)
		}
	}
	if len(s.Turns) != turns {
		t.Fatalf("turn rows %+v", s.Turns)
	}
	if s.Planned != 10*turns || !s.Validity.Valid && s.Validity.Host.Known == false {
		t.Errorf("planned %d (want %d); validity %+v", s.Planned, 10*turns, s.Validity)
	}
	if s.AchievedRate > 15 {
		t.Errorf("achieved rate %v: later turns counted as the schedule's arrivals", s.AchievedRate)
	}
	for _, tf := range s.Turns {
		if tf.Planned != 10 || tf.OK != 10 || tf.TTFT.Count != 10 {
			t.Errorf("turn %d: %+v", tf.Turn, tf)
		}
		f, ok := tf.CachedFraction()
		if !ok {
			t.Fatalf("turn %d: no cached counts (the simulator reports them)", tf.Turn)
		}
		// Turn k re-sends k-1 turns of history and adds one: about
		// (k-1)/k of its prompt is cached, the rest is prefilled.
		k := float64(tf.Turn)
		if want := 0.8 * (k - 1) / k; f < want || (tf.Turn == 1 && f > 0.2) {
			t.Errorf("turn %d: %.0f%% cached, want about %.0f%%", tf.Turn, 100*f, 100*(k-1)/k)
		}
		// Its first token comes after the prefill of what is not cached:
		// well before a cold prompt of its length would allow.
		cold := time.Duration(tf.PromptTokens/tf.OK) * cfg.PrefillPerToken
		if tf.Turn == 1 && tf.TTFT.P50 < cold*9/10 {
			t.Errorf("turn 1 TTFT p50 %v below its cold prefill %v", tf.TTFT.P50, cold)
		}
		warm := time.Duration((tf.PromptTokens-tf.CachedTokens)/tf.OK) * cfg.PrefillPerToken
		if tf.Turn > 1 && tf.TTFT.P50 > (warm+cold)/2 {
			t.Errorf("turn %d TTFT p50 %v: nearer the %v a cold prompt of its length takes than the %v of its uncached part", tf.Turn, tf.TTFT.P50, cold, warm)
		}
	}
}

// TestSessionAbortedMidway: a server failing every second turn leaves each
// session's third turn unsent/session_aborted, never missing.
func TestSessionAbortedMidway(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Count(string(b), `"role":"user"`) > 1 {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1,\"total_tokens\":6}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	st := sessionTarget(t, srv.URL+"/v1", 4)
	st.Baseline.Rate = 10
	p, err := NewPlan(st, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	res, err := p.Probe(context.Background(), ProbeRun{Window: 500 * time.Millisecond, Drain: 10 * time.Second, LedgerPath: path})
	if err != nil || res.LedgerErr != nil {
		t.Fatalf("probe: %v, ledger: %v", err, res.LedgerErr)
	}
	byS := ledgerSessions(t, path)
	if len(byS) != 5 {
		t.Errorf("%d sessions, want 5", len(byS))
	}
	want := map[int]ledger.Outcome{1: ledger.OK, 2: ledger.HTTPError, 3: ledger.Unsent, 4: ledger.Unsent}
	for id, ts := range byS {
		for k, o := range want {
			r, ok := ts[k]
			if !ok {
				t.Errorf("session %d: turn %d missing", id, k)
				continue
			}
			if r.Outcome != o || (o == ledger.Unsent && r.Reason != ledger.ReasonSessionAborted) {
				t.Errorf("session %d turn %d: %s/%s, want %s", id, k, r.Outcome, r.Reason, o)
			}
		}
	}
	rows := res.Summary.Turns
	if len(rows) != 4 || rows[1].Failed != 5 || rows[2].Aborted != 5 || rows[3].Aborted != 5 {
		t.Errorf("turn rows %+v", rows)
	}
}

// TestSessionConfigErrors: session keys are checked with their file and
// key: turns by config, the think time by its parser.
func TestSessionConfigErrors(t *testing.T) {
	tests := []struct{ session, want string }{
		{"{turns: 1, think: 1s}", "targets[0].classes[0].session.turns: want 2..32 (0: no session), got 1"},
		{"{turns: 33}", "targets[0].classes[0].session.turns: want 2..32"},
		{"{think: 1s}", "targets[0].classes[0].session.think: is set but session.turns is not"},
		{"{turns: 3, think: soon}", `targets[0].classes[0].session.think: "soon": want a duration`},
		{"{turns: 3, think: \"lognormal:1s\"}", `targets[0].classes[0].session.think: "lognormal:1s": lognormal think time needs sigma > 0`},
	}
	for _, tc := range tests {
		t.Run(tc.session, func(t *testing.T) {
			p := write(t, minimal+"    classes:\n      - name: chat\n        session: "+tc.session+"\n")
			_, err := Load(config.Options{Path: p, Environ: noEnv})
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(unplaced(err), p+": "+tc.want) {
				t.Errorf("want %q in:\n%v", p+": "+tc.want, err)
			}
			if !strings.Contains(err.Error(), p+":") {
				t.Errorf("no file position: %v", err)
			}
		})
	}
	// A session with the default think time (none) is valid.
	if _, err := Load(config.Options{BuiltIn: []byte(minimal + "    classes:\n      - name: chat\n        session: {turns: 2}\n"), Environ: noEnv}); err != nil {
		t.Errorf("turns 2 without think: %v", err)
	}
}

// TestSessionTurnBounds: config's bound on turns is within what the
// per-turn series label and the per-turn figures hold.
func TestSessionTurnBounds(t *testing.T) {
	if config.MaxSessionTurns > telemetry.MaxTurnLabel || config.MaxSessionTurns > stats.MaxTurnRows || config.MaxSessionTurns > dispatch.MaxSessionTurns {
		t.Errorf("session.turns up to %d, turn label up to %d, turn rows %d, dispatch %d",
			config.MaxSessionTurns, telemetry.MaxTurnLabel, stats.MaxTurnRows, dispatch.MaxSessionTurns)
	}
}
