package browser

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/statuspage"
	"github.com/llmprobe/llmprobe/internal/testutil"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// fleetConfig is more targets than the summary shows as cards: ok00…ok09
// on the simulator (team a, or team b for the odd ones) and down00, down01
// on a closed port (team b).
func fleetConfig(t *testing.T, simURL, closed string) *config.Config {
	t.Helper()
	var b strings.Builder
	b.WriteString("admin: {listen: \"127.0.0.1:0\"}\ndrain: {timeout: 2s}\ntargets:\n")
	target := func(name, url, team string) {
		fmt.Fprintf(&b, `  - name: %s
    url: %s
    model: llmprobe-sim
    labels: {team: %s, zone: eu-west}
    timeouts: {connect: 500ms, headers: 5s, first_content: 5s, idle: 5s, total: 10s}
    baseline: {rate: 2, arrival: constant}
    classes:
      - name: chat
        input: {dist: fixed, value: 16}
        output: {dist: fixed, value: 8}
        gates: {ttft: 3s}
`, name, url, team)
	}
	for i := range statuspage.InlineCards {
		target(fmt.Sprintf("ok%02d", i), simURL, map[bool]string{true: "a", false: "b"}[i%2 == 0])
	}
	target("down00", closed, "b")
	target("down01", closed, "b")
	cfg, err := wiring.Load(config.Options{BuiltIn: []byte(b.String()), Environ: func() []string { return nil }})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// summary is what chromium shows of the summary table.
type summary struct {
	URL    string
	Names  []string // the rows' target names, in page order
	States []string
	Labels []string // the rows' labels cells
	Cards  int      // full cards on the page
}

const readSummary = `(() => ({URL: location.href,
	Names: [...document.querySelectorAll("table.targets tr[data-state] td:first-child a")].map(a => a.innerText.trim()),
	States: [...document.querySelectorAll("table.targets tr[data-state]")].map(tr => tr.dataset.state),
	Labels: [...document.querySelectorAll("table.targets tr[data-state]")].map(tr => tr.cells[5].innerText.trim()),
	Cards: document.querySelectorAll("section.target").length}))()`

// TestSummaryInChromium: a daemon of 12 targets (more than InlineCards)
// shows the summary table without cards, worst first; the filter form
// (no script: a GET form) narrows it to the DOWN targets, a label in the
// query to one team; a target's name opens its own page with its full
// card, and an unknown name is a 404.
func TestSummaryInChromium(t *testing.T) {
	chrome, _ := chromiumPath(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	page := startDaemon(t, fleetConfig(t, testutil.StartSim(t, sim.DefaultConfig()), closed))
	testutil.Eventually(t, 90*time.Second, "both down targets judged DOWN on the summary", func() bool {
		return strings.Count(fetch(page), `<tr data-state="DOWN">`) == 2
	})

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bctx := browser(t, ctx, chrome)
	read := func(what string, actions ...chromedp.Action[chromedp.Void]) summary {
		t.Helper()
		if err := chromedp.Do(bctx, actions...); err != nil {
			t.Fatalf("%s in chromium (%s): %v", what, chrome, err)
		}
		s, err := chromedp.Run(bctx, chromedp.Evaluate[summary](readSummary))
		if err != nil {
			t.Fatalf("reading the summary after %s: %v", what, err)
		}
		t.Logf("%s: %s: %v %v, %d cards", what, s.URL, s.Names, s.States, s.Cards)
		return s
	}
	all := read("the summary", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("table.targets")))
	if len(all.Names) != 12 || all.Cards != 0 || all.States[0] != statuspage.StateDown || all.States[1] != statuspage.StateDown ||
		all.Names[0] != "down00" || all.Names[1] != "down01" {
		t.Errorf("summary: %d rows %v (%v), %d cards; want 12 rows, the two DOWN first, no card", len(all.Names), all.Names, all.States, all.Cards)
	}
	down := read("the state filter",
		chromedp.SetValue(chromedp.CSS(`form.filter select[name=state]`), statuspage.StateDown),
		chromedp.Click(chromedp.CSS(`form.filter button`)),
		chromedp.WaitVisible(chromedp.CSS(`#shown`)))
	if !strings.Contains(down.URL, "state=DOWN") {
		t.Errorf("the state filter went to %s, want ?state=DOWN", down.URL)
	}
	// On a busy host a down target can turn PROBER BLOCKED for a while (its
	// generator starved: the host is named before the target is judged), and
	// the filter then rightly leaves it out. The filter is right when it shows
	// exactly the targets the summary shows DOWN at the same moment; the test
	// waits up to a minute for both down targets to be DOWN again.
	for deadline := time.Now().Add(time.Minute); ; {
		if strings.Join(down.Names, ",") == "down00,down01" && down.Cards == 2 {
			break
		}
		now := read("the summary again", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("table.targets")))
		for _, st := range down.States {
			if st != statuspage.StateDown {
				t.Fatalf("filtered by state DOWN: a row is %s (%v %v)", st, down.Names, down.States)
			}
		}
		if time.Now().After(deadline) {
			// Each down target is shown, or PROBER BLOCKED on the summary.
			for i, n := range now.Names {
				if strings.HasPrefix(n, "down") && now.States[i] != statuspage.StateBlocked && !slices.Contains(down.Names, n) {
					t.Errorf("filtered by state: %s shows %v; want %s too (the summary: %v %v)", down.URL, down.Names, n, now.Names, now.States)
				}
			}
			if down.Cards != len(down.Names) {
				t.Errorf("filtered by state: %d rows, %d cards; want a card a row", len(down.Names), down.Cards)
			}
			t.Logf("a down target stayed PROBER BLOCKED for a minute (a host cause): %v %v", now.Names, now.States)
			break
		}
		time.Sleep(2 * time.Second)
		down = read("the state filter again", chromedp.Navigate(page+"?state=DOWN"), chromedp.WaitVisible(chromedp.CSS(`#shown`)))
	}
	teamA := read("the label filter", chromedp.Navigate(page+"?label=team:a"), chromedp.WaitVisible(chromedp.CSS(`#shown`)))
	// The set, not the order: rows are worst first, and on a busy host one
	// of them may be PROBER BLOCKED (its generator starved), which ranks it
	// ahead of the others.
	if names := slices.Sorted(slices.Values(teamA.Names)); strings.Join(names, ",") != "ok00,ok02,ok04,ok06,ok08" {
		t.Errorf("filtered by label team:a: %v", teamA.Names)
	}
	if len(teamA.Labels) == 0 || teamA.Labels[0] != "team=a zone=eu-west" {
		t.Errorf("labels cells %q, want team=a zone=eu-west", teamA.Labels)
	}
	if err := chromedp.Do(bctx,
		chromedp.Navigate(page),
		chromedp.Click(chromedp.CSS(`a[href="targets/ok03"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#target-ok03 .state`))); err != nil {
		t.Fatalf("opening ok03's page in chromium: %v", err)
	}
	word, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`#target-ok03 .state .word`)))
	if err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(bctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	one, err := chromedp.Run(bctx, chromedp.Evaluate[summary](readSummary))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(one.URL, "/targets/ok03") || one.Cards != 1 || word == "" || title != "ok03 · llmprobe status" {
		t.Errorf("target page %s: %d cards, state %q, title %q", one.URL, one.Cards, word, title)
	}
	// At phone width the table fits its box, labels and all.
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile), chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS("table.targets"))); err != nil {
		t.Fatalf("the summary at phone width: %v", err)
	}
	widths, err := chromedp.Run(bctx, chromedp.Evaluate[[]int](`(() => { const s = document.querySelector("table.targets").parentElement;
		return [s.scrollWidth, s.clientWidth, document.documentElement.scrollWidth, document.documentElement.clientWidth]; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if len(widths) != 4 || widths[0] > widths[1]+1 || widths[2] > widths[3] {
		t.Errorf("at 375 px the summary is wider than its box: table %d > %d or page %d > %d", widths[0], widths[1], widths[2], widths[3])
	}
	resp, err := http.Get(page + "targets/nosuch")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /targets/nosuch: %d, want 404", resp.StatusCode)
	}
}
