package browser

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/testutil"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// statesConfig is four targets, one per state: "healthy" (the simulator
// as it ships, TTFT gate 1 s), "slow" (every prefill 1.5 s, gate 500 ms:
// every request succeeds, late), "failing" (a third of the requests
// answered 500) and "down" (a port nothing listens on).
func statesConfig(t *testing.T, healthy, slow, failing, closed string) *config.Config {
	t.Helper()
	target := func(name, url, gate string) string {
		return fmt.Sprintf(`  - name: %s
    url: %s
    model: llmprobe-sim
    timeouts: {connect: 500ms, headers: 5s, first_content: 5s, idle: 5s, total: 10s}
    baseline: {rate: 4, arrival: constant}
    classes:
      - name: chat
        input: {dist: fixed, value: 16}
        output: {dist: fixed, value: 4}
        gates: {ttft: %s}
`, name, url, gate)
	}
	yaml := "admin: {listen: \"127.0.0.1:0\"}\ndrain: {timeout: 2s}\ntargets:\n" +
		target("healthy", healthy, "1s") + target("slow", slow, "500ms") + target("failing", failing, "1s") + target("down", closed, "1s")
	cfg, err := wiring.Load(config.Options{BuiltIn: []byte(yaml), Environ: func() []string { return nil }})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

var dataState = regexp.MustCompile(`<section class="target" id="target-([a-z]+)">\s*<h2>.*?</h2>\s*<div class="state state-[a-z]+" data-state="([A-Z ]+)"`)

// servedStates reads each target's state from the served page.
func servedStates(page string) map[string]string {
	out := map[string]string{}
	for _, m := range dataState.FindAllStringSubmatch(fetch(page), -1) {
		out[m[1]] = m[2]
	}
	return out
}

// TestTargetStatesInChromium: each card opens with the target's state as
// the rules judge it: OK for a healthy target, SLOW for one that answers
// every request late, FAILING for one that fails a third, DOWN for one
// that refuses every connection; the state is the card's first and most
// prominent block, above the prober's badge and facts. With
// LLMPROBE_SCREENSHOTS=DIR each card is saved as DIR/state-NAME.png.
func TestTargetStatesInChromium(t *testing.T) {
	chrome, required := chromiumPath(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	slowCfg, failCfg := sim.DefaultConfig(), sim.DefaultConfig()
	slowCfg.TTFT = sim.Dist{Kind: sim.Fixed, Value: 1.5}
	failCfg.ErrorFraction = 1.0 / 3
	page := startDaemon(t, statesConfig(t, testutil.StartSim(t, sim.DefaultConfig()), testutil.StartSim(t, slowCfg),
		testutil.StartSim(t, failCfg), closed))

	want := map[string]string{"healthy": "OK", "slow": "SLOW", "failing": "FAILING", "down": "DOWN"}
	var last map[string]string
	testutil.Eventually(t, 60*time.Second, "every target in its state on the served page", func() bool {
		last = servedStates(page)
		for name, st := range want {
			// valid, or invalid with a host cause: on a host too busy for
			// the prober to keep its schedule, the healthy target's card
			// says the prober is blocked, never OK
			if last[name] != st && (name != "healthy" || last[name] != "PROBER BLOCKED") {
				return false
			}
		}
		return true
	})
	t.Logf("served states: %v", last)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bctx := browser(t, ctx, chrome)
	if err := chromedp.Do(bctx,
		chromedp.EmulateViewport(1100, 900),
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS(`#target-down .state`)),
	); err != nil {
		if required {
			t.Fatalf("loading the status page in chromium (LLMPROBE_CHROMIUM=%s): %v", chrome, err)
		}
		t.Fatalf("loading the status page in chromium at %s: %v", chrome, err)
	}
	type card struct {
		Word, Next, Badge                           string
		WordPx, BodyPx                              float64
		StateTop, FactsTop, StateArea, LargestOther float64
		LargestOtherWhat                            string
	}
	for name, st := range want {
		c, err := chromedp.Run(bctx, chromedp.Evaluate[card](fmt.Sprintf(`(() => {
			const sec = document.getElementById(%q);
			const state = sec.querySelector(".state"), word = state.querySelector(".word");
			const area = el => { const r = el.getBoundingClientRect(); return r.width * r.height; };
			let largest = 0, what = "";
			// the largest coloured block besides the state: the prober's
			// verdict, its badge, the SLO state cells
			for (const el of sec.querySelectorAll(".generator, .badge, td.bad, td.ok")) {
				if (area(el) > largest) { largest = area(el); what = el.className; }
			}
			return {Word: word.innerText.trim(), Next: state.querySelector(".next").innerText.trim(),
				Badge: sec.querySelector("h2 .badge").innerText.trim(),
				WordPx: parseFloat(getComputedStyle(word).fontSize), BodyPx: parseFloat(getComputedStyle(document.body).fontSize),
				StateTop: state.getBoundingClientRect().top, FactsTop: sec.querySelector("dl.facts").getBoundingClientRect().top,
				StateArea: area(state), LargestOther: largest, LargestOtherWhat: what};
		})()`, "target-"+name)))
		if err != nil {
			t.Fatalf("reading %s's card: %v", name, err)
		}
		t.Logf("%s: %+v", name, c)
		if c.Word != st && (name != "healthy" || c.Word != "PROBER BLOCKED") { // a host cause, as above
			t.Errorf("%s shows %q, want %s", name, c.Word, st)
		}
		if c.Next == "" {
			t.Errorf("%s: no next step under its state", name)
		}
		if !strings.HasPrefix(c.Badge, "prober valid") && !strings.HasPrefix(c.Badge, "prober invalid: ") {
			t.Errorf("%s: prober badge %q", name, c.Badge)
		}
		if c.WordPx < 1.5*c.BodyPx || c.StateTop >= c.FactsTop || c.StateArea <= c.LargestOther {
			t.Errorf("%s: the state is not the card's first and largest block (word %gpx vs body %gpx, top %g vs facts %g, area %g vs %s %g)",
				name, c.WordPx, c.BodyPx, c.StateTop, c.FactsTop, c.StateArea, c.LargestOtherWhat, c.LargestOther)
		}
	}
	if dir := os.Getenv("LLMPROBE_SCREENSHOTS"); dir != "" {
		for name := range want {
			png, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.CSS("#target-"+name)))
			if err != nil {
				t.Fatalf("screenshot of %s: %v", name, err)
			}
			if err := os.WriteFile(filepath.Join(dir, "state-"+name+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
