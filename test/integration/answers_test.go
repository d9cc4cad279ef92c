package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/testutil"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// answersConfig: the simulator probed at 2 req/s by a class whose prompts
// are two answer checks of the shipped prompt library (arithmetic and
// copy), its identity read from the X-Model-Version header every second;
// no ladder (this test is about answers, not capacity).
const answersConfig = `
admin:
  listen: "ADMIN_ADDR"
log: {level: info, format: json}
drain: {timeout: 5s}
targets:
  - name: sim
    url: http://SIM_ADDR/v1
    api: openai-chat
    model: itest-model
    max_in_flight: 64
    timeouts: {connect: 2s, headers: 5s, first_content: 5s, idle: 5s, total: 10s}
    baseline: {rate: 2, arrival: poisson, seed: 11}
    identity: {response_header: X-Model-Version, poll_every: 1s}
    classes:
      - name: canary
        input: {dist: fixed, value: 32}
        output: {dist: fixed, value: 16}
        gates: {ttft: 500ms}
        record_answers: excerpt
        checks:
          - name: add
            prompt: "What is 19 + 23? Reply with the number only."
            expect: {number: 42}
          - name: copy
            prompt: 'Repeat exactly, without quotes: "blue harbour 7"'
            expect: {text: "blue harbour 7"}
`

// TestDeployTurnsAnswersWrong is issue 29's deploy end to end: the
// simulator's identity changes (v1 → v2) and its answers turn wrong
// seconds later, fast and available as before. In a real Prometheus with the
// shipped rules (time-scaled: the 30-minute ratio is 15 s, the 6-hour
// window 3 min), LLMProbeAnswersWrongAfterChange fires for the checks that
// passed under v1, no availability or latency alert fires, and the
// target's card says WRONG ANSWERS with the failing checks' reason.
//
// It needs the whole issue (the checks configuration and metric, the
// judge, the simulator's wrong answers): on a tree without the checks
// configuration it skips.
func TestDeployTurnsAnswersWrong(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a real Prometheus is not started")
	}
	probe := replaceAll(answersConfig, "ADMIN_ADDR", "127.0.0.1:1", "SIM_ADDR", "127.0.0.1:2")
	if _, err := wiring.Load(config.Options{BuiltIn: []byte(probe), Environ: func() []string { return nil }}); err != nil {
		if strings.Contains(err.Error(), "checks") || strings.Contains(err.Error(), "record_answers") {
			t.Skipf("this tree has no answer checks configuration yet: %v", err)
		}
		t.Fatalf("config: %v", err)
	}
	st := startDeployStackWith(t, answersConfig, false, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	testutil.EventuallyOK(t, 60*time.Second, "the checks' pass ratio recorded under v1", func() error {
		res, err := query(ctx, st.promURL, `llmprobe:answer_check_pass_by_version:ratio_rate30m{target="sim", class="canary", version="v1"} == 1`)
		if err == nil && len(res) < 2 {
			err = fmt.Errorf("%d checks passing under v1 so far", len(res))
		}
		return err
	})
	if fired := st.everFired(ctx, t, "LLMProbe.*(BurnRate|Answers).*"); len(fired) > 0 {
		t.Fatalf("alerts before the deploy: %v", fired)
	}
	// The deploy: v2 first, its answers wrong as soon as Prometheus has seen
	// it (the time-scaled 15 s ratio would otherwise count the second the
	// identity poll takes as v1's wrong answers; at full scale that second is
	// nothing against 30 minutes).
	deployed := st.deploy(t, `{"version":"v2"}`)
	testutil.EventuallyOK(t, 30*time.Second, "v2 in llmprobe_target_info", func() error {
		res, err := query(ctx, st.promURL, `llmprobe_target_info{target="sim", version="v2"}`)
		if err == nil && len(res) == 0 {
			err = fmt.Errorf("not yet")
		}
		return err
	})
	st.deploy(t, `{"wrong_answers":["text"]}`)
	testutil.EventuallyOK(t, 120*time.Second, "LLMProbeAnswersWrongAfterChange firing for both checks", func() error {
		got, err := st.firing(ctx, "LLMProbeAnswersWrongAfterChange")
		if err != nil {
			return err
		}
		checks := map[string]bool{}
		for _, g := range got {
			if g["target"] == "sim" && g["class"] == "canary" && g["version"] == "v2" && g["severity"] == "page" && g["slo"] == "correctness" {
				checks[g["check"]] = true
			}
		}
		if !checks["add"] || !checks["copy"] {
			return fmt.Errorf("firing: %v", got)
		}
		t.Logf("LLMProbeAnswersWrongAfterChange firing %v after the deploy: %v", time.Since(deployed).Round(time.Second), got)
		return nil
	})
	if fired := st.everFired(ctx, t, "LLMProbe(Availability|Latency)BurnRate.*"); len(fired) > 0 {
		t.Errorf("availability or latency alerts fired on wrong answers: %v", fired)
	}
	page, err := httpGet(ctx, st.admin+"/targets/sim")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-state="WRONG ANSWERS"`, "mismatch ×", " v1: ", " v2: "} {
		if !strings.Contains(page, want) {
			t.Errorf("the card lacks %q:\n%s", want, testutil.Tail(page, 3000))
		}
	}
	ratio := st.value(ctx, t, `llmprobe:sli_correctness_errors:ratio_rate5m{target="sim",class="canary"}`)
	t.Logf("llmprobe:sli_correctness_errors:ratio_rate5m = %.3f", ratio)
}
