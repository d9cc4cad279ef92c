package statuspage

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

var fleetNow = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

// kind is what a fleet target does over the last hour.
type kind int

const (
	kindOK kind = iota
	kindFailing
	kindSlow
	kindOff
)

// kindOf spreads the kinds over a fleet: one in ten failing, one in ten
// slow, one in ten disabled, the rest OK.
func kindOf(i int) kind {
	switch i % 10 {
	case 0:
		return kindFailing
	case 1:
		return kindSlow
	case 2:
		return kindOff
	}
	return kindOK
}

// fleetTarget is one target of a synthetic fleet: two classes with a
// 1 s TTFT gate, 120 baseline requests each over the last hour, labels
// team and region, failures kept when failing, a ladder every fifth.
func fleetTarget(i int) TargetInput {
	name := fmt.Sprintf("t%04d", i)
	k := kindOf(i)
	mem := NewMemory()
	ttft := 200 * time.Millisecond
	if k == kindSlow {
		ttft = 3 * time.Second
	}
	var fails []Failure
	for _, class := range []string{"chat", "long"} {
		for j := range 120 {
			at := fleetNow.Add(-time.Duration(j) * 25 * time.Second)
			rec := &ledger.Record{Target: name, Class: class, Traffic: ledger.TrafficBaseline, Outcome: ledger.OK, Reason: ledger.ReasonStop,
				Planned: time.Second, Dispatched: time.Second, Headers: time.Second + ttft, FirstContent: time.Second + ttft, End: 2*time.Second + ttft}
			if k == kindFailing && j%2 == 0 {
				rec.Outcome, rec.Reason, rec.Status = ledger.HTTPError, ledger.ReasonServerError, 500
				if len(fails) < MaxFailures {
					fails = append(fails, Failure{When: at, Traffic: "baseline", Class: class, Outcome: "http_error", Reason: "server_error", Status: 500, Error: "upstream connect error"})
				}
			}
			mem.Record(at, rec, stats.Gates{TTFT: time.Second})
		}
	}
	t := TargetInput{Name: name, API: "openai-chat", Model: "m", Verdict: verdict.Validity{Valid: true}, Memory: mem, Failures: fails,
		Configured: Configured{BaselineOff: k == kindOff, BaselineRate: 0.2, Ladder: i%5 >= 3}, // t0003 has run a ladder, t0004 not yet
		Classes:    []ClassFacts{{Name: "chat", TTFT: time.Second}, {Name: "long", TTFT: time.Second}},
		Labels:     map[string]string{"team": fmt.Sprintf("team%d", i%3), "zone": "eu-west"}}
	if i%5 == 3 {
		res := ladder.Result{Finished: fleetNow.Add(-time.Hour / 2), Verdict: ladderresult.Verdict{Capacity: 12, CapacityStep: 3, CapacityBound: ladderresult.BoundLower}}
		mem.AddLadder(res)
		t.Last = &res
	}
	return t
}

func fleetStatus(n int) Status {
	in := Input{Version: "v1", Started: fleetNow.Add(-2 * time.Hour), Now: fleetNow}
	for i := range n {
		in.Targets = append(in.Targets, fleetTarget(i))
	}
	return Build(in)
}

func serve(t *testing.T, st Status, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler(func() Status { return st }, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec
}

var rowRE = regexp.MustCompile(`<tr data-state="([A-Z ]+)"><td><a href="targets/([a-z0-9]+)">`)

// shown are the (state, name) of the summary's rows, in page order.
func shown(body string) (states, names []string) {
	for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
		states, names = append(states, m[1]), append(names, m[2])
	}
	return states, names
}

// TestSummaryRows: each kind of target has its row: state word, the worst
// class's TTFT p99 against its gate (over it flagged), availability over
// 60 minutes with its count, the last capacity.
func TestSummaryRows(t *testing.T) {
	st := fleetStatus(10)
	for _, tc := range []struct {
		name, state, ttft, avail, capacity string
		over                               bool
	}{
		{"t0000", StateFailing, "chat 200ms / 1s", "50.00 % of 240", "ladders off", false},
		{"t0001", StateSlow, "chat 3s / 1s", "100.00 % of 240", "ladders off", true},
		{"t0002", StateDisabled, "chat 200ms / 1s", "100.00 % of 240", "ladders off", false},
		{"t0003", StateOK, "chat 200ms / 1s", "100.00 % of 240", "≥ 12 req/s", false},
		{"t0004", StateOK, "chat 200ms / 1s", "100.00 % of 240", "-", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := slices.IndexFunc(st.Targets, func(ts TargetStatus) bool { return ts.Name == tc.name })
			if i < 0 {
				t.Fatalf("no %s", tc.name)
			}
			ts := st.Targets[i]
			r := ts.Row
			if ts.Target.State != tc.state || r.TTFT != tc.ttft || r.Over != tc.over || r.Availability != tc.avail || r.Capacity != tc.capacity {
				t.Errorf("%s: state %q row %+v; want %s %q over=%v %q %q", tc.name, ts.Target.State, r, tc.state, tc.ttft, tc.over, tc.avail, tc.capacity)
			}
			if want := []Label{{"team", "team" + tc.name[4:]}, {"zone", "eu-west"}}; tc.name <= "t0002" && !slices.Equal(ts.Labels, want) {
				t.Errorf("labels %v, want %v", ts.Labels, want)
			}
		})
	}
}

// TestSummaryFilters: the rows are worst first; ?state= and ?label= narrow
// them (several labels all apply, several states any); what is not
// understood is named, escaped, and ignored.
func TestSummaryFilters(t *testing.T) {
	st := fleetStatus(30)
	all := func(ts []TargetStatus, keep func(TargetStatus) bool) (names []string) {
		for _, x := range ts {
			if keep(x) {
				names = append(names, x.Name)
			}
		}
		return names
	}
	for _, tc := range []struct {
		query string
		want  []string
		note  string
	}{
		{"/", all(st.Targets, func(TargetStatus) bool { return true }), ""},
		{"/?state=FAILING", []string{"t0000", "t0010", "t0020"}, ""},
		{"/?state=failing&state=SLOW", []string{"t0000", "t0010", "t0020", "t0001", "t0011", "t0021"}, ""},
		{"/?label=team:team1", all(st.Targets, func(x TargetStatus) bool { return slices.Contains(x.Labels, Label{"team", "team1"}) }), ""},
		{"/?state=FAILING&label=team:team1", []string{"t0010"}, ""},
		{"/?label=team:team1&label=zone:us", nil, ""},
		{"/?state=CAPACITY+REGRESSED", nil, ""},
		{"/?state=%3Cb%3E&label=nocolon", all(st.Targets, func(TargetStatus) bool { return true }), "Ignored: state &lt;B&gt;; label nocolon (want name:value)."},
	} {
		t.Run(tc.query, func(t *testing.T) {
			rec := serve(t, st, tc.query)
			body := rec.Body.String()
			states, names := shown(body)
			if rec.Code != http.StatusOK || !slices.Equal(names, tc.want) {
				t.Fatalf("status %d, rows %v; want %v", rec.Code, names, tc.want)
			}
			if !slices.IsSortedFunc(states, func(a, b string) int { return stateRank(a) - stateRank(b) }) {
				t.Errorf("rows not worst first: %v", states)
			}
			if strings.Contains(body, "<B>") || (tc.note != "") != strings.Contains(body, `id="filter-note"`) || !strings.Contains(body, tc.note) {
				t.Errorf("filter note: want %q in the page", tc.note)
			}
			if cards := strings.Count(body, `<section class="target"`); (len(names) <= InlineCards) != (cards == len(names)) || (len(names) > InlineCards && cards != 0) {
				t.Errorf("%d cards inline for %d rows (inline up to %d)", cards, len(names), InlineCards)
			}
		})
	}
}

// TestTargetPage: /targets/NAME is the target's full card; a name not of
// the name rule or of no target is a 404 that does not echo it.
func TestTargetPage(t *testing.T) {
	st := fleetStatus(30)
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/targets/t0010", http.StatusOK, `<section class="target" id="target-t0010">`},
		{"/targets/t0999", http.StatusNotFound, "no target named t0999"},
		{"/targets/T0010", http.StatusNotFound, "a target name is"},
		{"/targets/%3Cscript%3E", http.StatusNotFound, "a target name is"},
		{"/targets/", http.StatusNotFound, "a target name is"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rec := serve(t, st, tc.path)
			body := rec.Body.String()
			if rec.Code != tc.code || !strings.Contains(body, tc.want) || strings.Contains(body, "<script>") {
				t.Fatalf("status %d, body %.300q; want %d with %q", rec.Code, body, tc.code, tc.want)
			}
			if tc.code != http.StatusOK {
				return
			}
			if n := strings.Count(body, `<section class="target"`); n != 1 {
				t.Errorf("%d cards, want 1", n)
			}
			for _, want := range []string{`data-state="FAILING"`, `href="../metrics"`, `href="../">all targets`, "upstream connect error", "<title>t0010 · llmprobe status</title>"} {
				if !strings.Contains(body, want) {
					t.Errorf("target page lacks %q", want)
				}
			}
		})
	}
}

// TestSummaryLabelsEscaped: a label value reaches the page cleaned by the
// one sanitiser and escaped.
func TestSummaryLabelsEscaped(t *testing.T) {
	in := Input{Now: fleetNow, Targets: []TargetInput{{Name: "a", Labels: map[string]string{"team": "<script>alert(1)</script>\x1b[31m\nx"}}}}
	body := serve(t, Build(in), "/").Body.String()
	if strings.Contains(body, "<script>alert") || strings.Contains(body, "\x1b") || !strings.Contains(body, "team=&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("label not cleaned and escaped: %s", body[strings.Index(body, "<table class=\"targets\""):])
	}
}

// TestPageSize measures the page for 100 and 1,000 targets: all cards on
// one page (before) against the summary table (after), and bounds the
// summary at 200 bytes a row beside a fixed head.
func TestPageSize(t *testing.T) {
	for _, n := range []int{100, 1000} {
		st := fleetStatus(n)
		after := serve(t, st, "/").Body.Len()
		before := allCards(t, st)
		card := serve(t, st, "/targets/t0003").Body.Len()
		t.Logf("%d targets: all cards on one page %d bytes (%.0f KB); summary %d bytes (%.0f KB); one target's page %d bytes", n, before, float64(before)/1024, after, float64(after)/1024, card)
		if after > 12000+200*n || after*10 > before {
			t.Errorf("%d targets: summary %d bytes, want ≤ %d and a tenth of the cards' %d", n, after, 12000+200*n, before)
		}
	}
}

// allCards renders every target as a card on one page, as the page was
// before the summary.
func allCards(t *testing.T, st Status) int {
	t.Helper()
	d := view(func() Status { return st }, "")
	for i := range d.Targets {
		d.Cards = append(d.Cards, &d.Targets[i])
	}
	rec := httptest.NewRecorder()
	execute(rec, http.StatusOK, "summary", d, nil)
	return rec.Body.Len()
}

// BenchmarkPage: building the view of 1,000 targets (what the daemon does
// for /) or of one (for /targets/NAME), and rendering the summary, all
// cards, or one target's page.
func BenchmarkPage(b *testing.B) {
	in := Input{Version: "v1", Started: fleetNow.Add(-2 * time.Hour), Now: fleetNow}
	for i := range 1000 {
		in.Targets = append(in.Targets, fleetTarget(i))
	}
	st := Build(in)
	h := Handler(func() Status { return st }, nil)
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			Build(in)
		}
	})
	b.Run("build one", func(b *testing.B) {
		one := Input{Version: "v1", Started: in.Started, Now: fleetNow, Targets: in.Targets[3:4]}
		for b.Loop() {
			Build(one)
		}
	})
	for _, path := range []string{"/", "/targets/t0003"} {
		b.Run("render "+path, func(b *testing.B) {
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
			}
		})
	}
	b.Run("render all cards", func(b *testing.B) {
		d := view(func() Status { return st }, "")
		for i := range d.Targets {
			d.Cards = append(d.Cards, &d.Targets[i])
		}
		for b.Loop() {
			execute(httptest.NewRecorder(), http.StatusOK, "summary", d, nil)
		}
	})
}

// TestPagesOneTarget: with a source of one target, /targets/NAME builds
// that target alone (never the whole view); an invalid name reaches
// neither source, and / uses the whole view.
func TestPagesOneTarget(t *testing.T) {
	var all, one []string
	h := Pages(func() Status { all = append(all, "all"); return fleetStatus(3) },
		func(name string) Status {
			one = append(one, name)
			in := Input{Now: fleetNow}
			if name == "t0001" {
				in.Targets = []TargetInput{fleetTarget(1)}
			}
			return Build(in)
		}, nil)
	for _, tc := range []struct {
		path          string
		code          int
		wantAll       int
		wantOne       []string
		wantInPage    string
		wantNotInPage string
	}{
		{"/targets/t0001", http.StatusOK, 0, []string{"t0001"}, `id="target-t0001"`, `id="target-t0000"`},
		{"/targets/t0002", http.StatusNotFound, 0, []string{"t0002"}, "no target named t0002", "<section"},
		{"/targets/Bad", http.StatusNotFound, 0, nil, "a target name is", "<section"},
		{"/", http.StatusOK, 1, nil, `href="targets/t0002"`, "no target"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			all, one = nil, nil
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
			body := rec.Body.String()
			if rec.Code != tc.code || len(all) != tc.wantAll || !slices.Equal(one, tc.wantOne) ||
				!strings.Contains(body, tc.wantInPage) || strings.Contains(body, tc.wantNotInPage) {
				t.Errorf("%d, whole view built %d times, one target built for %v; want %d, %d, %v, with %q and without %q",
					rec.Code, len(all), one, tc.code, tc.wantAll, tc.wantOne, tc.wantInPage, tc.wantNotInPage)
			}
		})
	}
}

// TestSummaryMarksInvalidProber: a target judged while its generator was
// invalid for a cause that does not block it (a SLOW one here) is marked
// in its row with the cause, linked to its evidence, and counted in the
// summary line; a valid one is not marked.
func TestSummaryMarksInvalidProber(t *testing.T) {
	in := Input{Version: "v1", Started: fleetNow.Add(-2 * time.Hour), Now: fleetNow}
	for i := range 12 {
		in.Targets = append(in.Targets, fleetTarget(i))
	}
	slow := 0
	for kindOf(slow) != kindSlow {
		slow++
	}
	in.Targets[slow].Verdict = verdict.Validity{Causes: []verdict.InvalidCause{{Cause: cause.DispatchLag, Reason: "lag p99 80ms", Action: "lower the rate"}}}
	st := Build(in)
	name := in.Targets[slow].Name
	if !strings.Contains(st.Summary, "; 1 more with the prober invalid") {
		t.Errorf("summary %q does not count the invalid SLOW target", st.Summary)
	}
	body := serve(t, st, "/").Body.String()
	row := regexp.MustCompile(`<tr data-state="SLOW"><td><a href="targets/` + name + `">.*?</tr>`).FindString(body)
	if !strings.Contains(row, `prober invalid: lag</a>`) || !strings.Contains(row, `href="targets/`+name+`#generator-`+name+`"`) {
		t.Errorf("%s's row lacks the prober badge linked to its evidence: %s", name, row)
	}
	if n := strings.Count(body, "badge invalid prober"); n != 1 {
		t.Errorf("%d badges on the summary, want 1 (only %s)", n, name)
	}
}
