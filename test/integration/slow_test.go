package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestDeploySlowPagesLatencyOnly: a deploy that makes the simulator slow
// but keeps it answering (every prefill 1 s, the class's TTFT gate 500 ms;
// POST /admin/state {"ttft": …}, no version change so no ladder). The
// latency page fires; the availability alerts never do: every request
// succeeded, and a slow success is the latency SLI's alone. The old
// availability definition (planned − good over planned, good meaning
// within the gates) is computed beside it from the same series, to show
// that it would have paged a second time.
func TestDeploySlowPagesLatencyOnly(t *testing.T) {
	st := startDeployStack(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	testutil.EventuallyOK(t, 60*time.Second, "the SLIs recorded", func() error {
		for _, q := range []string{`llmprobe:sli_availability_errors:ratio_rate1h{target="sim",class="chat"}`, `llmprobe:sli_latency_errors:ratio_rate1h{target="sim",class="chat"}`} {
			res, err := query(ctx, st.promURL, q)
			if err != nil {
				return err
			}
			if len(res) == 0 {
				return fmt.Errorf("%s: no series yet", q)
			}
		}
		return nil
	})
	time.Sleep(5 * time.Second)
	before := st.everFired(ctx, t, "LLMProbe.*")
	t.Logf("alerts fired before the slow deploy: %v", before)
	for _, a := range before {
		if strings.Contains(a, "BurnRate") {
			t.Fatalf("a burn-rate alert before the deploy: %v", before)
		}
	}

	deployed := st.deploy(t, `{"ttft":{"kind":"fixed","value":1}}`)
	testutil.EventuallyOK(t, 150*time.Second, "LLMProbeLatencyBurnRatePage firing", func() error {
		got, err := st.firing(ctx, "LLMProbeLatencyBurnRatePage")
		if err != nil {
			return err
		}
		for _, g := range got {
			if g["target"] == "sim" && g["class"] == "chat" && g["severity"] == "page" && g["slo"] == "latency" {
				t.Logf("LLMProbeLatencyBurnRatePage firing %v after the slow deploy: %v", time.Since(deployed).Round(time.Second), g)
				return nil
			}
		}
		return fmt.Errorf("firing: %v", got)
	})
	// Longer than the scaled page windows (30 s and 3 s) and its for
	// (1 s): under the old definition the availability page would fire
	// in this time.
	time.Sleep(35 * time.Second)

	span := fmt.Sprintf("%ds", int(time.Since(deployed).Seconds()))
	after := st.everFired(ctx, t, "LLMProbe.*")
	t.Logf("alerts fired after the slow deploy: %v", after)
	oldDef := st.value(ctx, t, `max_over_time((
  (sum(increase(llmprobe_requests_planned_total{target="sim",traffic="baseline",during!="ladder"}[30s])) - sum(increase(llmprobe_requests_good_total{target="sim",traffic="baseline",during!="ladder"}[30s])))
  / sum(increase(llmprobe_requests_planned_total{target="sim",traffic="baseline",during!="ladder"}[30s]))
)[`+span+`:1s])`)
	avail := st.value(ctx, t, `max_over_time(llmprobe:sli_availability_errors:ratio_rate1h{target="sim",class="chat"}[`+span+`])`)
	lat := st.value(ctx, t, `max_over_time(llmprobe:sli_latency_errors:ratio_rate1h{target="sim",class="chat"}[`+span+`])`)
	failed := st.value(ctx, t, `sum(increase(llmprobe_requests_total{target="sim",traffic="baseline",outcome!="ok"}[`+span+`])) or vector(0)`)
	t.Logf("since the slow deploy: worst 30s error ratio %.3f by the old availability definition (planned − good), %.3f by the availability SLI, %.3f by the latency SLI (page thresholds 0.072 and 0.144); %.0f requests not ok",
		oldDef, avail, lat, failed)
	if oldDef <= 0.072 {
		t.Errorf("the old definition peaked at %.3f: below the page threshold, so this test would not catch the regression", oldDef)
	}
	if avail > 0.072 {
		t.Errorf("the availability SLI reached %.3f for a target that answered every request", avail)
	}
	for _, a := range after {
		if strings.HasPrefix(a, "LLMProbeAvailabilityBurnRate") {
			t.Errorf("an availability alert fired for a slow but successful target: %s", a)
		}
	}
}
