package browser

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/statuspage"
	"github.com/llmprobe/llmprobe/internal/testutil"
	"github.com/llmprobe/llmprobe/internal/verdict"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// cardTarget is one target of the scenarios' daemon.
func cardTarget(name, url, gate, extra string) string {
	return fmt.Sprintf(`  - name: %s
    url: %s
    model: llmprobe-sim
    timeouts: {connect: 500ms, headers: 5s, first_content: 5s, idle: 5s, total: 10s}
    baseline: {rate: 4, arrival: constant}
    classes:
      - name: chat
        input: {dist: fixed, value: 16}
        output: {dist: fixed, value: 16}
        gates: {ttft: %s}
%s`, name, url, gate, extra)
}

// deployLadder is the deploy target's ladder, as in the walk-through of
// docs/ladder.md (steps of 3 s instead of 6): at start and on every
// identity change, steps 4 to 24 req/s around its capacity (20 req/s
// with 4 slots, 10 with 2; the baseline's 2 req/s shares it).
const deployLadder = `    identity: {response_header: X-Model-Version, poll_every: 1s}
    ladder:
      enabled: true
      run_on_start: true
      run_on_identity_change: true
      steps: [4, 8, 12, 16, 24]
      step_duration: 3s
      stop_at: capacity
      gap: 200ms
      max_rate: 30
      arrival: constant
      max_lag_p99: 1s
      rate_tolerance: 0.5
      baseline_settle: 1s
      abort: {on_generator_invalid: false}
`

// scenarioConfig is one daemon with a target per scenario: deploy (4
// slots of 200 ms: 20 req/s, v1), slow, failing, refused (the simulator
// wants a key the prober does not send), down, disabled and budget (5
// requests a day).
func scenarioConfig(t *testing.T, urls map[string]string) *config.Config {
	t.Helper()
	deploy := strings.Replace(cardTarget("deploy", urls["deploy"], "500ms", deployLadder), "baseline: {rate: 4,", "baseline: {rate: 2,", 1)
	yaml := "admin: {listen: \"127.0.0.1:0\"}\ndrain: {timeout: 2s}\ntargets:\n" + deploy +
		cardTarget("slow", urls["slow"], "500ms", "") + cardTarget("failing", urls["failing"], "1s", "") +
		cardTarget("refused", urls["refused"], "1s", "") + cardTarget("down", urls["down"], "1s", "") +
		strings.Replace(cardTarget("disabled", urls["healthy"], "1s", ""), "baseline: {rate: 4, arrival: constant}", "baseline: {enabled: false}", 1) +
		cardTarget("budget", urls["healthy"], "1s", "    budget: {requests_per_day: 5}\n")
	cfg, err := wiring.Load(config.Options{BuiltIn: []byte(yaml), Environ: func() []string { return nil }})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// card is what a card shows, read in the browser.
type card struct {
	Word, Next, Figures, Capacity, Summary string
	Order                                  []string // every card's state word, in page order
}

func readCard(t *testing.T, bctx context.Context, page, name string, shot string) card {
	t.Helper()
	if err := chromedp.Do(bctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#target-"+name+" .state"))); err != nil {
		t.Fatalf("loading the page for %s: %v", name, err)
	}
	c, err := chromedp.Run(bctx, chromedp.Evaluate[card](fmt.Sprintf(`(() => {
			const sec = document.getElementById(%q), st = sec.querySelector(".state");
			const text = sel => { const e = st.querySelector(sel); return e ? e.innerText.trim() : ""; };
			return {Word: text(".word"), Next: text(".next"), Figures: text(".figures"),
				Capacity: sec.querySelector("dd.capacity").innerText.trim(),
				Summary: (document.getElementById("summary") || {innerText: ""}).innerText.trim(),
				Order: [...document.querySelectorAll("section.target .state")].map(e => e.dataset.state)};
		})()`, "target-"+name)))
	if err != nil {
		t.Fatalf("reading %s's card: %v", name, err)
	}
	if dir := os.Getenv("LLMPROBE_SCREENSHOTS"); dir != "" && shot != "" {
		png, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.CSS("#target-"+name)))
		if err != nil {
			t.Fatalf("screenshot of %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "card-"+shot+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%s: %s | %s | %s | capacity %s", name, c.Word, c.Figures, c.Next, c.Capacity)
	return c
}

// servedState is a target's state word on the served page.
func servedState(page, name string) string {
	m := regexp.MustCompile(`id="target-` + name + `">\s*<h2>.*?</h2>\s*<div class="state state-[a-z]+" data-state="([A-Z ]+)"`).FindStringSubmatch(fetch(page))
	if m == nil {
		return ""
	}
	return m[1]
}

// want is what a card must say: its state word and a phrase of its
// evidence and of its next step.
type want struct{ word, figures, next string }

func (w want) check(t *testing.T, name string, c card) {
	t.Helper()
	if c.Word != w.word || !strings.Contains(c.Figures, w.figures) || !strings.Contains(c.Next, w.next) {
		t.Errorf("%s: %q / %q / %q; want %s, evidence with %q, next step with %q", name, c.Word, c.Figures, c.Next, w.word, w.figures, w.next)
	}
}

// TestCardScenariosInChromium drives each scenario the on-call meets
// against a real daemon and simulators, and reads the card in Chromium:
// the start-up ladder running, SLOW, FAILING, REFUSED (401), DOWN,
// DISABLED, a budget spent, and a deploy that halves the capacity (4 → 2
// slots, v1 → v2: OK, then CAPACITY REGRESSED with both capacities and
// identities). Each card's state word, evidence and next step are
// asserted; the cards are sorted worst first under a summary line. With
// LLMPROBE_SCREENSHOTS=DIR each card is saved as DIR/card-SCENARIO.png.
func TestCardScenariosInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: seven targets, two ladders and a deploy in real time")
	}
	chrome, _ := chromiumPath(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	deployCfg, slowCfg, failCfg, refusedCfg := sim.DefaultConfig(), sim.DefaultConfig(), sim.DefaultConfig(), sim.DefaultConfig()
	deployCfg.Slots, deployCfg.Version = 4, "v1"
	deployCfg.TTFT, deployCfg.TokenTime, deployCfg.OutputTokens = sim.FixedDist(0.05), sim.FixedDist(0.01), sim.FixedDist(16) // 200 ms a request
	slowCfg.TTFT = sim.FixedDist(1.5)
	failCfg.ErrorFraction = 1.0 / 3
	refusedCfg.APIKey = "the-key-the-prober-lacks"
	urls := map[string]string{"deploy": testutil.StartSim(t, deployCfg), "slow": testutil.StartSim(t, slowCfg),
		"failing": testutil.StartSim(t, failCfg), "refused": testutil.StartSim(t, refusedCfg), "down": closed,
		"healthy": testutil.StartSim(t, sim.DefaultConfig())}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bctx := browser(t, ctx, chrome)
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1100, 1400)); err != nil {
		t.Fatalf("chromium (%s): %v", chrome, err)
	}
	page := startDaemon(t, scenarioConfig(t, urls))

	// Start-up: the ladder runs, and the card says so (not NO DATA).
	testutil.Eventually(t, 30*time.Second, "the start-up ladder on the deploy card", func() bool { return servedState(page, "deploy") == statuspage.StateLadder })
	want{statuspage.StateLadder, "held out of the SLO until about", "judged again"}.check(t, "deploy at start-up", readCard(t, bctx, page, "deploy", "startup-ladder"))

	scenarios := map[string]want{
		"slow":     {statuspage.StateSlow, "against the gate 500ms", "queue and load"},
		"failing":  {statuspage.StateFailing, "sent in the last 5 min failed", "answers with errors"},
		"refused":  {statuspage.StateRefused, "(HTTP 401)", "refuses the prober's credentials (HTTP 401)"},
		"down":     {statuspage.StateDown, "transport_error/connection_refused", "up and reachable"},
		"disabled": {statuspage.StateDisabled, "baseline probing is off", "baseline.enabled"},
		"budget":   {statuspage.StateBlocked, "today's budget is spent (5 requests", "requests_per_day"},
	}
	testutil.Eventually(t, 90*time.Second, "every scenario in its state", func() bool {
		for name, w := range scenarios {
			if servedState(page, name) != w.word {
				return false
			}
		}
		// The deploy target before the deploy: OK, or, on a host too busy
		// for the prober (and the simulator beside it) to keep time,
		// PROBER BLOCKED or SLOW with the host named (checked below).
		st := servedState(page, "deploy")
		return st == statuspage.StateOK || st == statuspage.StateBlocked || st == statuspage.StateSlow
	})
	for name, w := range scenarios {
		c := readCard(t, bctx, page, name, name)
		w.check(t, name, c)
		checkOrder(t, c)
	}
	before := readCard(t, bctx, page, "deploy", "deploy-before")
	if before.Word == statuspage.StateOK {
		want{statuspage.StateOK, "sent", "Nothing to do"}.check(t, "deploy before", before)
	} else if !hostCaused(before) {
		t.Errorf("deploy before: %s without a host cause: %q", before.Word, before.Figures)
	}

	// The deploy: half the slots, a new version. The identity change
	// starts a ladder, which measures the new capacity.
	admin := strings.TrimSuffix(urls["deploy"], "/v1") + "/admin/state"
	resp, err := http.Post(admin, "application/json", strings.NewReader(`{"version":"v2","slots":2}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for deadline := time.Now().Add(90 * time.Second); servedState(page, "deploy") != statuspage.StateRegressed; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			c := readCard(t, bctx, page, "deploy", "deploy-timeout")
			t.Fatalf("the deploy card did not turn %s within 90s of the deploy: %+v", statuspage.StateRegressed, c)
		}
	}
	after := readCard(t, bctx, page, "deploy", "deploy-after")
	want{statuspage.StateRegressed, "from llmprobe-sim v1 to llmprobe-sim v2", "roll back"}.check(t, "deploy after", after)
	if !regexp.MustCompile(`capacity \d+(\.\d+)? → \d+(\.\d+)? req/s`).MatchString(after.Figures) {
		t.Errorf("regressed card without both capacities: %q", after.Figures)
	}
	t.Logf("deploy card before: %s (capacity %s); after: %s: %s (capacity %s)", before.Word, before.Capacity, after.Word, after.Figures, after.Capacity)
}

// hostCaused reports whether a card names the prober host as a cause (the
// valid-or-host-cause rule of tests on a busy host).
func hostCaused(c card) bool {
	return strings.Contains(c.Figures, "the prober's figures may describe the prober") ||
		strings.Contains(c.Figures, "host_starved") || strings.Contains(c.Figures, "cgroup_throttled")
}

// checkOrder: the cards are sorted worst first (statuspage's order) and
// the summary line counts them.
func checkOrder(t *testing.T, c card) {
	t.Helper()
	rank := map[string]int{}
	for i, s := range []string{statuspage.StateDown, statuspage.StateRefused, statuspage.StateFailing, statuspage.StateSlow, statuspage.StateRegressed,
		statuspage.StateBlocked, statuspage.StateNoData, statuspage.StateTooFew, statuspage.StateLadder, statuspage.StateOK, statuspage.StateDisabled} {
		rank[s] = i
	}
	n := map[string]int{}
	for i, s := range c.Order {
		n[s]++
		if i > 0 && rank[s] < rank[c.Order[i-1]] {
			t.Errorf("cards not worst first: %v", c.Order)
		}
	}
	for s, k := range n {
		if !strings.Contains(c.Summary, fmt.Sprintf("%d %s", k, s)) {
			t.Errorf("summary %q does not count %d %s (cards %v)", c.Summary, k, s, c.Order)
		}
	}
	if !strings.HasPrefix(c.Summary, fmt.Sprintf("%d targets: ", len(c.Order))) {
		t.Errorf("summary %q for %d cards", c.Summary, len(c.Order))
	}
}

// TestStarvedHostCardInChromium: a ladder aborted at step 1 because the
// prober host was starved, the host still starved. The host's starvation
// cannot be produced on demand, so the daemon's typed facts are handed to
// the page as the daemon would hand them (statuspage.Build), and the card
// is read in Chromium: PROBER BLOCKED, the starved host named as the
// abort's cause (never "no valid step met the gates") and when the next
// ladder runs.
func TestStarvedHostCardInChromium(t *testing.T) {
	chrome, _ := chromiumPath(t)
	now := time.Now()
	step := ladderresult.LadderStep{Index: 1, Rate: 4, Aborted: true, AbortReason: ladder.ReasonGeneratorInvalid + ": host_starved"}
	step.Summary.Validity = verdict.Validity{Causes: []verdict.InvalidCause{{Cause: cause.HostStarved, Reason: "host CPU pressure 92 % over the last minute"}}}
	res := &ladder.Result{Started: now.Add(-2 * time.Minute), Finished: now.Add(-time.Minute), Steps: []ladderresult.LadderStep{step},
		Aborted: true, AbortReason: "step 1: " + step.AbortReason, Trigger: "start"}
	in := statuspage.Input{Version: "test", Started: now.Add(-3 * time.Minute), Now: now, Targets: []statuspage.TargetInput{{
		Name: "starved", API: "openai-chat", Model: "m", Last: res, NextLadder: now.Add(time.Hour),
		Verdict: verdict.Validity{Causes: []verdict.InvalidCause{{Cause: cause.HostStarved, Reason: "host CPU pressure 92 %",
			Action: "give the prober CPU (a dedicated core, or lower the rates)"}}},
		Classes: []statuspage.ClassFacts{{Name: "chat", TTFT: time.Second}}, Configured: statuspage.Configured{Ladder: true}}}}
	srv := httptest.NewServer(statuspage.Handler(func() statuspage.Status { return statuspage.Build(in) }, nil))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bctx := browser(t, ctx, chrome)
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1100, 900)); err != nil {
		t.Fatalf("chromium (%s): %v", chrome, err)
	}
	c := readCard(t, bctx, srv.URL+"/", "starved", "starved-host")
	want{statuspage.StateBlocked, "aborted at step 1 because the prober host was starved (host_starved), not because of the target", "give the prober CPU"}.check(t, "starved", c)
	if !strings.Contains(c.Figures, "next ladder at") || !strings.Contains(c.Capacity, "prober host was starved") || strings.Contains(c.Capacity, "no valid step") {
		t.Errorf("starved: evidence %q, capacity %q", c.Figures, c.Capacity)
	}
}
