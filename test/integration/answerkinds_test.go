package integration

import (
	"context"
	"fmt"
	"html"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testutil"
)

// shippedChecks is the shipped canary example: one canary class per check
// kind beside a plain class with latency gates.
const shippedChecks = "../../config/checks.yaml"

// shippedChecksHeader is the stack's target around the shipped file's
// classes: the deploy stack's simulator, its identity read from the
// X-Model-Version header every second, at 12 req/s (1 req/s to each canary
// class, 6 to the plain one), no ladder.
const shippedChecksHeader = `
admin:
  listen: "ADMIN_ADDR"
log: {level: info, format: json}
drain: {timeout: 5s}
targets:
  - name: sim
    url: http://SIM_ADDR/v1
    api: openai-chat
    model: llmprobe-sim
    max_in_flight: 64
    timeouts: {connect: 2s, headers: 5s, first_content: 5s, idle: 5s, total: 10s}
    baseline: {rate: 12, arrival: poisson, seed: 11}
    identity: {response_header: X-Model-Version, poll_every: 1s}
`

// shippedFailReasons: the reason each shipped check fails with when the
// simulator answers every kind wrong (the round trip's final answer is a
// text: mismatch).
var shippedFailReasons = map[string]string{
	"add": "mismatch", "multiply": "mismatch", "copy": "mismatch", "json-object": "invalid_json",
	"weather": "no_tool_call", "weather-round-trip": "mismatch", "stop-at-6": "stop_ignored",
	"length-5": "length_ignored", "model-name": "wrong_model",
}

// shippedCanaryConfig is the stack's configuration with the shipped
// example's classes, as written, and the checks of each canary class.
func shippedCanaryConfig(t *testing.T) (string, map[string][]string) {
	t.Helper()
	b, err := os.ReadFile(shippedChecks)
	if err != nil {
		t.Fatal(err)
	}
	_, classes, ok := strings.Cut(string(b), "\n    classes:\n")
	if !ok || strings.Contains(classes, "\n  - name: ") {
		t.Fatalf("%s: want one target whose classes end the file", shippedChecks)
	}
	checks := map[string][]string{}
	class := ""
	for _, l := range strings.Split(classes, "\n") {
		switch {
		case strings.HasPrefix(l, "      - name: "):
			class = strings.TrimPrefix(l, "      - name: ")
		case strings.HasPrefix(l, "          - name: "):
			checks[class] = append(checks[class], strings.TrimPrefix(l, "          - name: "))
		}
	}
	if len(checks) < 6 {
		t.Fatalf("%s: canary classes %v, want one per check kind", shippedChecks, checks)
	}
	return shippedChecksHeader + "    classes:\n" + classes, checks
}

// TestDeployTurnsEveryKindWrong: the shipped canary classes (every check
// kind) against the simulator; a deploy changes its identity (v1 → v2) and
// then every kind of its answers turns wrong (text, json, tool_call, stop,
// length, model), fast and available as before. In a real Prometheus with
// the shipped rules, time-scaled, LLMProbeAnswersWrongAfterChange fires for
// every check of every canary class under v2, llmprobe_answer_checks_total
// counts each check's failures under its kind's reason; no availability or latency
// alert ever fires, the plain class's included; the card says WRONG
// ANSWERS with each kind's reason.
func TestDeployTurnsEveryKindWrong(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a real Prometheus is not started")
	}
	config, checks := shippedCanaryConfig(t)
	st := startDeployStackWith(t, config, false, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	total := 0
	for _, cs := range checks {
		total += len(cs)
	}
	testutil.EventuallyOK(t, 90*time.Second, "every check passing under v1", func() error {
		res, err := query(ctx, st.promURL, `llmprobe:answer_check_pass_by_version:ratio_rate30m{target="sim", version="v1"} == 1`)
		if err == nil && len(res) < total {
			err = fmt.Errorf("%d of %d checks passing under v1 so far", len(res), total)
		}
		return err
	})
	if fired := st.everFired(ctx, t, "LLMProbe.*(BurnRate|Answers).*"); len(fired) > 0 {
		t.Fatalf("alerts before the deploy: %v", fired)
	}
	// v2 first, its answers wrong once Prometheus has seen it (as in
	// TestDeployTurnsAnswersWrong: the time-scaled 15 s ratio would count
	// the identity poll's second of wrong answers as v1's).
	deployed := st.deploy(t, `{"version":"v2"}`)
	testutil.EventuallyOK(t, 30*time.Second, "v2 in llmprobe_target_info", func() error {
		res, err := query(ctx, st.promURL, `llmprobe_target_info{target="sim", version="v2"}`)
		if err == nil && len(res) == 0 {
			err = fmt.Errorf("not yet")
		}
		return err
	})
	st.deploy(t, `{"wrong_answers":["text","json","tool_call","stop","length","model"]}`)
	var firing []string
	testutil.EventuallyOK(t, 150*time.Second, "LLMProbeAnswersWrongAfterChange firing for every check", func() error {
		got, err := st.firing(ctx, "LLMProbeAnswersWrongAfterChange")
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, g := range got {
			if g["target"] == "sim" && g["version"] == "v2" && g["severity"] == "page" && g["slo"] == "correctness" {
				seen[g["class"]+"/"+g["check"]] = true
			}
		}
		var missing []string
		for class, cs := range checks {
			for _, c := range cs {
				if !seen[class+"/"+c] {
					missing = append(missing, class+"/"+c)
				}
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			return fmt.Errorf("not firing for %v", missing)
		}
		firing = firing[:0]
		for k := range seen {
			firing = append(firing, k)
		}
		sort.Strings(firing)
		return nil
	})
	t.Logf("LLMProbeAnswersWrongAfterChange firing %v after the deploy for %v", time.Since(deployed).Round(time.Second), firing)
	// The metric: each check failed with its kind's reason, and no other.
	res, err := query(ctx, st.promURL, `sum by (check, reason) (llmprobe_answer_checks_total{target="sim", result="fail"}) > 0`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range res {
		got[r.Metric["check"]] = append(got[r.Metric["check"]], r.Metric["reason"])
	}
	for check, reason := range shippedFailReasons {
		if len(got[check]) != 1 || got[check][0] != reason {
			t.Errorf("llmprobe_answer_checks_total{check=%q, result=\"fail\"} by reason: %v, want %s alone", check, got[check], reason)
		}
	}
	if len(got) != len(shippedFailReasons) {
		t.Errorf("failed checks by reason %v, want %v", got, shippedFailReasons)
	}
	if fired := st.everFired(ctx, t, "LLMProbe(Availability|Latency)BurnRate.*"); len(fired) > 0 {
		t.Errorf("availability or latency alerts fired on wrong answers: %v", fired)
	}
	page, err := httpGet(ctx, st.admin+"/targets/sim")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-state="WRONG ANSWERS"`, "mismatch", "invalid_json", "no_tool_call", "stop_ignored", "length_ignored", "wrong_model"} {
		if !strings.Contains(page, want) {
			t.Errorf("the card lacks %q:\n%s", want, testutil.Tail(page, 4000))
		}
	}
	t.Logf("the card (text):\n%s", cardText(page))
}

// cardText is a card's HTML as text: tags dropped, blank lines squeezed.
func cardText(page string) string {
	page = regexp.MustCompile(`(?s)<(style|script)[^>]*>.*?</(style|script)>`).ReplaceAllString(page, "")
	page = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(page, " ")
	var out []string
	for _, l := range strings.Split(html.UnescapeString(page), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
