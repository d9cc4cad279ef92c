package daemon

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// The texts the canary test's copy checks ask the simulator to repeat.
// Each holds a sentinel to grep for, the target's API key (the simulator
// echoes it: a sanitised excerpt shows it as the marker) and an escape
// character (not printable: shown as U+FFFD); the first is longer than an
// excerpt's 256 bytes.
const (
	canaryKey      = "sk-live-CANARY-SENTINEL-4c1d9e0b7a2f"
	sentinelKept   = "KEPT-SENTINEL-q7x2"
	sentinelHidden = "HIDDEN-SENTINEL-z9w4"
)

var (
	copyKept   = sentinelKept + " " + canaryKey + " \x1b[31m " + strings.Repeat("lorem ipsum ", 30) + "end"
	copyHidden = sentinelHidden + " dolor sit amet"
)

// canaryYAML: a target with two canary classes against the simulator,
// "kept" recording excerpts, "hidden" not; each has a copy check (which
// the simulator's wrong text breaks: it drops the last character) and a
// check it still passes. The copy checks' expectations hold neither the
// sentinel nor the key: /config shows expectations (not prompts).
func canaryYAML(dir, url string) string {
	prompt := func(s string) string {
		b, _ := json.Marshal(`Repeat exactly, without quotes: "` + s + `"`)
		return string(b) // a JSON string is a YAML double-quoted scalar
	}
	return fmt.Sprintf(`ledger: {dir: %s}
admin: {listen: "127.0.0.1:0"}
drain: {timeout: 2s}
targets:
  - name: sim
    url: %s
    model: llmprobe-sim
    api_key_env: LLMPROBE_TEST_CANARY_KEY
    timeouts: {connect: 2s, headers: 5s, first_content: 5s, idle: 5s, total: 10s}
    baseline: {rate: 20, arrival: constant}
    classes:
      - name: kept
        record_answers: excerpt
        checks:
          - {name: copy-kept, prompt: %s, max_tokens: 400, expect: {regex: "^KEPT-.* end$"}}
          - {name: model-name, prompt: "What is 2 + 2? Reply with the number only.", max_tokens: 8, model: {name: llmprobe-sim}}
      - name: hidden
        checks:
          - {name: copy-hidden, prompt: %s, max_tokens: 64, expect: {regex: "^HIDDEN-.* amet$"}}
          - {name: stop-at-6, prompt: "Count from 1 to 10, separated by single spaces. Reply with the numbers only.", max_tokens: 32, stop: {sequences: [" 6"]}}
`, dir, url, prompt(copyKept), prompt(copyHidden))
}

// TestCanaryClassLeaksNoAnswer (issue 29 items 2–4): a daemon's canary
// classes against the simulator answering text wrong. The copy checks fail
// mismatch, the others pass, on /metrics by result and reason. The ledger
// record of a failed check holds the answer's SHA-256 and, only on the
// class with record_answers: excerpt, an excerpt: the answer sanitised
// (the echoed key redacted, the escape character replaced) and cut to 256
// bytes, readable in /debug/requests too. The card says WRONG ANSWERS with
// the failing checks and their reason. Neither sentinel reaches the logs, a
// label or the status page; the hidden one reaches nothing at all.
func TestCanaryClassLeaksNoAnswer(t *testing.T) {
	t.Setenv("LLMPROBE_TEST_CANARY_KEY", canaryKey)
	cfgSim := sim.DefaultConfig()
	cfgSim.TTFT, cfgSim.TokenTime = sim.FixedDist(0.005), sim.FixedDist(0.001)
	cfgSim.WrongAnswers = []string{"text"}
	url := testutil.StartSim(t, cfgSim)
	dir := t.TempDir()
	cfg := loadConfig(t, canaryYAML(dir, url))
	logs := &testutil.SyncBuffer{}
	r := startDaemon(t, cfg, func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	const metric = "llmprobe_answer_checks_total"
	waitFor(t, 30*time.Second, "every check judged twice", func() bool { // generous: a busy machine
		fams := r.metrics(t)
		for _, c := range [][]string{
			{"class", "kept", "check", "copy-kept", "result", "fail", "reason", "mismatch"},
			{"class", "kept", "check", "model-name", "result", "pass"},
			{"class", "hidden", "check", "copy-hidden", "result", "fail", "reason", "mismatch"},
			{"class", "hidden", "check", "stop-at-6", "result", "pass"},
		} {
			if n, _ := sum(fams, metric, append([]string{"target", "sim"}, c...)...); n < 2 {
				return false
			}
		}
		return true
	})
	// Half of each class's judged checks fail: the correctness SLI burns at
	// the page tier once 3 have failed, and the card says WRONG ANSWERS,
	// naming the failing checks and their reason (never the answer).
	waitFor(t, 30*time.Second, "the card in WRONG ANSWERS", func() bool {
		return strings.Contains(r.get(t, "/targets/sim"), `data-state="WRONG ANSWERS"`)
	})
	card := r.get(t, "/targets/sim")
	for _, want := range []string{"copy-kept", "copy-hidden", "mismatch"} {
		if !strings.Contains(card, want) {
			t.Errorf("the WRONG ANSWERS card does not name %q", want)
		}
	}
	fams := r.metrics(t)
	for _, s := range fams[metric].samples {
		// A right answer never fails, a wrong one never passes; a fail's
		// reason is its kind's (the zero series of others stay 0).
		pass := s.labels["check"] == "model-name" || s.labels["check"] == "stop-at-6"
		if s.value > 0 && ((pass && s.labels["result"] == "fail") || (!pass && s.labels["result"] == "pass") ||
			(s.labels["result"] == "fail" && s.labels["reason"] != "mismatch")) {
			t.Errorf("%s%v = %v", metric, s.labels, s.value)
		}
		if s.labels["result"] != "fail" && s.labels["reason"] != "" {
			t.Errorf("%s%v: a reason on a result other than fail", metric, s.labels)
		}
	}
	pages := map[string]string{}
	for _, p := range []string{"/metrics", "/debug/requests", "/config", "/", "/targets/sim"} {
		pages[p] = r.get(t, p)
	}
	status, err := json.Marshal(r.d.status())
	if err != nil {
		t.Fatal(err)
	}
	pages["status feed"] = string(status)
	if err := r.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}

	recs, text := canaryLedger(t, dir)
	kept, hidden := checkRecords(recs, "copy-kept"), checkRecords(recs, "copy-hidden")
	if len(kept) < 2 || len(hidden) < 2 {
		t.Fatalf("ledger: %d copy-kept and %d copy-hidden records, want ≥ 2 each", len(kept), len(hidden))
	}
	wantKept := sanitize.NewRedactor(canaryKey).String(copyKept[:len(copyKept)-1], answercheck.MaxExcerptBytes)
	for _, c := range kept {
		judgedRecord(t, c, copyKept)
		if c.Excerpt != wantKept || len(c.Excerpt) > answercheck.MaxExcerptBytes || !utf8.ValidString(c.Excerpt) {
			t.Errorf("copy-kept excerpt %q (%d bytes), want the sanitised answer %q", c.Excerpt, len(c.Excerpt), wantKept)
		}
	}
	if !strings.HasPrefix(wantKept, sentinelKept+" "+sanitize.Marker+" \uFFFD[31m ") || len(wantKept) < answercheck.MaxExcerptBytes-3 {
		t.Errorf("the excerpt %q does not show the key redacted, the escape replaced, cut near 256 bytes", wantKept)
	}
	for _, c := range hidden {
		judgedRecord(t, c, copyHidden)
		if c.Excerpt != "" {
			t.Errorf("copy-hidden record has an excerpt %q without record_answers: excerpt", c.Excerpt)
		}
	}
	for _, c := range append(checkRecords(recs, "model-name"), checkRecords(recs, "stop-at-6")...) {
		if c.Result != answercheck.Pass || len(c.AnswerSHA256) != 64 {
			t.Errorf("check %+v: want passed, with the answer's hash", c)
		}
		if c.Name == "stop-at-6" && c.Excerpt != "" {
			t.Errorf("stop-at-6 record has an excerpt %q without record_answers: excerpt", c.Excerpt)
		}
		// Every judged answer of an excerpt class is kept, a passed one
		// too: 2 + 2 answered off by one (the wrong text), its model right.
		if c.Name == "model-name" && c.Excerpt != "5" {
			t.Errorf("model-name excerpt %q, want the answer 5 (record_answers: excerpt keeps every judged answer)", c.Excerpt)
		}
	}
	if !strings.Contains(pages["/debug/requests"], wantKept[:64]) {
		t.Errorf("/debug/requests does not show a failed check's excerpt")
	}

	pages["logs"] = logs.String()
	pages["ledger files"] = text
	for where, page := range pages {
		if strings.Contains(page, canaryKey[:sanitize.MinFragment]) {
			t.Errorf("the API key the simulator echoed leaked into %s", where)
		}
		if strings.Contains(page, sentinelHidden) {
			t.Errorf("the answer (or prompt) of a class without excerpts reached %s", where)
		}
		if where != "ledger files" && where != "/debug/requests" && strings.Contains(page, sentinelKept) {
			t.Errorf("an answer (or prompt) reached %s", where)
		}
	}
}

// judgedRecord: a copy check's record failed mismatch with the hash of the
// simulator's wrong answer (the text less its last character).
func judgedRecord(t *testing.T, c *ledger.CheckRecord, copied string) {
	t.Helper()
	wrong := copied[:len(copied)-1]
	if c.Kind != answercheck.KindExpect || c.Result != answercheck.Fail || c.Reason != answercheck.Mismatch {
		t.Errorf("%s: %s %s %s, want expect fail mismatch", c.Name, c.Kind, c.Result, c.Reason)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(c.AnswerSHA256) || c.AnswerSHA256 != answercheck.AnswerSHA256(answercheck.Answer{Text: wrong}) {
		t.Errorf("%s: answer_sha256 %q, want the SHA-256 of the answer", c.Name, c.AnswerSHA256)
	}
}

// canaryLedger reads every record of the ledger files in dir, and their text.
func canaryLedger(t *testing.T, dir string) ([]ledger.Record, string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) == 0 {
		t.Fatalf("no ledger file in %s", dir)
	}
	var recs []ledger.Record
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var rec ledger.Record
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Check != nil {
				recs = append(recs, rec)
			}
		}
	}
	return recs, all.String()
}

// checkRecords returns the check records of the named check.
func checkRecords(recs []ledger.Record, name string) []*ledger.CheckRecord {
	var out []*ledger.CheckRecord
	for i := range recs {
		if recs[i].Check.Name == name {
			out = append(out, recs[i].Check)
		}
	}
	return out
}
