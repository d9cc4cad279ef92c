package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/stats"
)

var probePage = newPage("probe", `{{template "top" .}}<p>{{.Mode}}</p>
<h2>Rates</h2>
<table class="rates">
<tr><th>window</th><td>{{.Window}}</td></tr>
<tr><th>requested rate</th><td>{{.Requested}}</td></tr>
<tr><th>achieved rate</th><td>{{.Achieved}}</td></tr>
<tr><th>planned</th><td>{{.Planned}}</td></tr>
<tr><th>dispatched</th><td>{{.Dispatched}}</td></tr>
<tr><th>unsent</th><td>{{.Unsent}}</td></tr>
<tr><th>retries</th><td>{{.Retries}}</td></tr>
</table>
<h2>Outcomes</h2>
<table class="outcomes">
<tr><th>outcome</th><th>count</th><th>reasons</th></tr>
{{range .Outcomes}}<tr><td>{{.Name}}</td><td>{{.Count}}</td><td style="text-align:left">{{.Reasons}}</td></tr>
{{end}}</table>
{{if .Path}}<p class="note">Requests were sent to {{.Path}}.</p>
{{end}}{{if .Checks}}<h2>Answer checks</h2>
<table class="checks">
<tr><th>check</th><th>kind</th><th>runs</th><th>pass</th><th>fail</th><th>not judged</th><th>fail reasons</th></tr>
{{range .Checks}}<tr{{if .Failed}} class="failed"{{end}}><td class="name">{{.Check}}</td><td class="name">{{.Kind}}</td><td>{{.Runs}}</td><td>{{.Pass}}</td><td>{{.Fail}}</td><td>{{.NotJudged}}</td><td class="reasons">{{.ReasonsCell}}</td></tr>
{{end}}</table>
<p class="note">Pass: the answer was right; fail: wrong, by reason; not judged: the request did not end ok (it counts as availability). No answer's text is shown.</p>
{{end}}
<h2>Latency</h2>
<table class="latency">
<tr><th>figure</th><th>count</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>max</th><th>boundary</th></tr>
{{range .Latency}}<tr><td>{{.Label}}</td><td>{{.Count}}</td><td>{{.P50}}</td><td>{{.P90}}</td><td>{{.P95}}</td><td>{{.P99}}</td><td>{{.Max}}</td><td style="text-align:left">{{.Boundary}}</td></tr>
{{end}}</table>
{{if .Matched}}<h2>Client − server per request</h2>
<table class="matched">
<tr><th>gap</th><th>count</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>max</th></tr>
{{range .Matched}}<tr><td>{{.Label}}</td><td>{{.Count}}</td><td>{{.P50}}</td><td>{{.P90}}</td><td>{{.P95}}</td><td>{{.P99}}</td><td>{{.Max}}</td></tr>
{{end}}</table>
<p class="note">{{.MatchedNote}}.</p>
{{end}}{{with .Server}}<h2>Server view ({{.Source}})</h2>
<p>{{.Explanation}}</p>
<table class="server">
<tr><th>{{.RunningHead}}</th><th>{{.WaitingHead}}</th><th>KV cache max</th></tr>
<tr><td>{{.Running}}</td><td>{{.Waiting}}</td><td>{{.KV}}</td></tr>
</table>
{{if .Gap}}<table class="gap">
<tr><th>TTFT</th><th>n</th><th>p50</th><th>p95</th></tr>
<tr><td>server</td><td>{{.SrvN}}</td><td>{{.SrvP50}}</td><td>{{.SrvP95}}</td></tr>
<tr><td>client</td><td>{{.CliN}}</td><td>{{.CliP50}}</td><td>{{.CliP95}}</td></tr>
<tr><td>network + queueing gap</td><td></td><td>{{.GapP50}}</td><td>{{.GapP95}}</td></tr>
</table>
<p class="note">{{.GapNote}}.</p>
{{end}}{{end}}{{if .Prefix}}<h2>Prefix cache</h2>
<table class="prefix">
<tr><th>class</th><th>TTFT n</th><th>p50</th><th>p95</th><th>speedup p50</th><th>speedup p95</th><th>cached tokens</th></tr>
{{range .Prefix}}<tr><td>{{.Class}}</td><td>{{.CachedN}}</td><td>{{.CachedP50}}</td><td>{{.CachedP95}}</td><td>{{.SpeedupP50}}</td><td>{{.SpeedupP95}}</td><td style="text-align:left">{{.CachedTokens}}</td></tr>
<tr><td>{{.Cold}}</td><td>{{.ColdN}}</td><td>{{.ColdP50}}</td><td>{{.ColdP95}}</td><td></td><td></td><td style="text-align:left">{{.ColdTokens}}</td></tr>
{{end}}</table>
<p class="note">{{.PrefixNote}}</p>
{{end}}<h2>Goodput</h2>
<table class="goodput">
<tr><th>gates</th><td>{{.Gates}}</td></tr>
<tr><th>good</th><td>{{.Good}}</td></tr>
<tr><th>goodput</th><td>{{.Goodput}}</td></tr>
<tr><th>good fraction</th><td>{{.GoodFraction}}</td></tr>
</table>
<h2>Generator</h2>
<p{{if not .Valid}} class="invalid"{{end}}>{{.Verdict}}</p>
{{range .Causes}}<p class="note">{{.}}</p>
{{end}}</body>
</html>
`)

type outcomeRow struct {
	Name    string
	Count   int
	Reasons string
}

type latencyRow struct {
	Label, P50, P90, P95, P99, Max, Boundary string
	Count                                    int
}

// probeServer is the probe page's server section.
type probeServer struct {
	Source, Explanation, RunningHead, WaitingHead, Running, Waiting, KV string
	SrvN, SrvP50, SrvP95, CliP50, CliP95, GapP50, GapP95, GapNote       string
	CliN                                                                int
	Gap                                                                 bool
}

// probeServerOf is v's section beside s, nil without a view.
func probeServerOf(v *servermetrics.View, s stats.Summary) *probeServer {
	if v == nil {
		return nil
	}
	steps := []ServerStep{{View: v}}
	ps := &probeServer{Source: ServerSource(steps), Explanation: v.Explanation, CliN: s.TTFT.Count,
		CliP50: pdur(s.TTFT, s.TTFT.P50), CliP95: pdur(s.TTFT, s.TTFT.P95), GapNote: GapNote}
	ps.RunningHead, ps.WaitingHead = ServerHeads(steps)
	ps.Running, ps.Waiting, ps.KV = ServerCells(v)
	ps.SrvP50, ps.SrvP95, ps.SrvN = serverTTFT(v)
	if g := servermetrics.Gap(*v, s.TTFT.Count, s.TTFT.P50, s.TTFT.P95); g != nil {
		ps.Gap = true
		ps.GapP50, ps.GapP95 = gapCells(g)
	}
	return ps
}

// ProbeHTML is ProbeHTMLWith without the server's view.
func ProbeHTML(w io.Writer, s stats.Summary, m Meta) error { return ProbeHTMLWith(w, s, nil, m) }

// ProbeHTMLWith writes a self-contained HTML page for one probe run: its
// lead (the verdict m carries, with its exit status; the gates against
// the good fraction; the outcomes; the generator verdict; the server
// view), the same header as the ladder's (m, the gates and the prober
// host's evidence), the rates, the outcome table, the answer checks'
// table (m.Checks; none: no section), the latency
// percentiles, the per-request client − server gaps where the server sent
// its timings, the server's view of the run (server, nil: none), goodput
// and the generator's verdict with its causes.
func ProbeHTMLWith(w io.Writer, s stats.Summary, server *servermetrics.View, m Meta) error {
	title := "llmprobe probe"
	if m.Target != "" {
		title += ": " + m.Target
	}
	var hosts []string
	if h := s.Validity.Host; h.Known {
		hosts = []string{h.String()}
	}
	header, err := headerHTML(m.header(m.Started, gates(s.Gates), hosts))
	if err != nil {
		return err
	}
	data := struct {
		Title, Mode, Window, Requested, Achieved, Gates, Goodput, GoodFraction, Verdict string
		Planned, Dispatched, Unsent, Retries, Good                                      int
		Header, Lead                                                                    template.HTML
		Outcomes                                                                        []outcomeRow
		Latency                                                                         []latencyRow
		Causes                                                                          []string
		Valid                                                                           bool
		Prefix                                                                          []prefixRow
		PrefixNote, Path, MatchedNote                                                   string
		Matched                                                                         []latencyRow
		Server                                                                          *probeServer
		Checks                                                                          []checkHTMLRow
	}{
		Title: title, Mode: ModeLine(s.Mode), Window: dur(s.Window), Requested: rate(s.RequestedRate), Achieved: rate(s.AchievedRate),
		Planned: s.Planned, Dispatched: s.Dispatched, Unsent: s.Unsent, Retries: s.Retries, Good: s.Good,
		Gates: gates(s.Gates), Goodput: rate(s.GoodputPerSecond), GoodFraction: goodFraction(s),
		Verdict: GeneratorVerdictLine(s.Validity), Valid: s.Validity.Valid,
		Header: header, Prefix: prefixRows(s), PrefixNote: PrefixNote, Path: m.Path,
		Matched: probeMatchedRows(s), MatchedNote: MatchedGapNote, Server: probeServerOf(server, s),
		Checks: checksHTMLRows(m.Checks),
	}
	if data.Lead, err = leadHTML(probeLead(s, server, m)); err != nil {
		return err
	}
	if s.Mode == ledger.ModeClosed {
		data.Requested = "n/a (closed loop)"
	}
	for _, o := range ledger.Outcomes {
		rs := reasonsAt(s.Outcomes.ByReason[o], m.Path)
		if rs == "" {
			rs = "-"
		}
		data.Outcomes = append(data.Outcomes, outcomeRow{Name: string(o), Count: s.Outcomes.ByOutcome[o], Reasons: rs})
	}
	bounds := boundariesFor(s)
	for _, f := range figures(s) {
		if f.optional && (f.p.Count == 0 || f.key == FigArrivalTTFT || f.key == FigArrivalE2E) {
			continue
		}
		r := latencyRow{Label: f.label, Count: f.p.Count, Boundary: bounds[f.key], P50: "-", P90: "-", P95: "-", P99: "-", Max: "-"}
		if p := f.p; p.Count > 0 {
			r.P50, r.P90, r.P95, r.P99, r.Max = dur(p.P50), dur(p.P90), dur(p.P95), dur(p.P99), dur(p.Max)
			if !p.Exact {
				r.Boundary += " (histogram, ≈)"
			}
		}
		data.Latency = append(data.Latency, r)
	}
	for _, c := range s.Validity.Causes {
		data.Causes = append(data.Causes, fmt.Sprintf("%s [%s]; what to do: %s", c.Reason, c.Cause, c.Action))
	}
	data.Causes = append(data.Causes, s.Validity.Notes...)
	var b strings.Builder
	if err := probePage.Execute(&b, data); err != nil {
		return fmt.Errorf("report: rendering probe HTML: %w", err)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: writing probe HTML: %w", err)
	}
	return nil
}
