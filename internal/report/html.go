package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
)

// pageTop opens every HTML report (the ladder's and the probe's): the
// head with the shared style, the title and the run's header table. A page
// starts with {{template "top" .}}; its data has Title, Lead (the verdict
// and its evidence, leadHTML) and Header.
const pageTop = `{{define "top"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
{{css}}</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{.Lead}}{{.Header}}
{{end}}`

// newPage parses an HTML report's template: pageTop, then body.
func newPage(name, body string) *template.Template {
	css := func() template.CSS { return template.CSS(pageCSS) }
	return template.Must(template.New(name).Funcs(template.FuncMap{"css": css}).Parse(pageTop + body))
}

var ladderPage = newPage("ladder", `{{template "top" .}}<p>Open loop: arrivals from a fixed schedule; latencies from the planned send time.
Gates: {{.Gates}}.</p>
<p><strong>Capacity:</strong> {{.Capacity}}<br><strong>Knee:</strong> {{.Knee}}{{if .Abort}}<br><strong>Aborted:</strong> {{.Abort}}{{end}}</p>
{{if .Classes}}<p>Per class (each class's own records and gates; rates are the class's share of the step rate):</p>
<table>
<tr><th>class</th><th>capacity</th><th>knee</th></tr>
{{range .Classes}}<tr><td>{{.Class}}</td><td>{{.Capacity}}</td><td>{{.Knee}}</td></tr>
{{end}}</table>
{{end}}{{.SVG}}
<table>
<tr><th>step</th><th>rate (req/s)</th><th>planned</th><th>dispatched</th><th>unsent</th><th>ok</th><th>rejected</th><th>other failures</th><th>censored</th><th>TTFT p50</th><th>TTFT p95</th><th>e2e p95</th><th>goodput (req/s)</th><th>good fraction</th><th>valid</th><th>steady</th><th>retries</th></tr>
{{range .Rows}}<tr{{if not .Valid}} class="invalid"{{else if .Saturated}} class="saturated"{{end}}><td>{{.Index}}</td><td>{{.Rate}}</td><td>{{.Planned}}</td><td>{{.Dispatched}}</td><td>{{.Unsent}}</td><td>{{.OK}}</td><td>{{.Rejected}}</td><td>{{.Other}}</td><td>{{.Censored}}</td><td>{{.TTFT50}}</td><td>{{.TTFT95}}</td><td>{{.E2E95}}</td><td>{{.Goodput}}</td><td>{{.GoodFrac}}</td><td>{{.ValidCell}}</td><td>{{.SteadyCell}}</td><td>{{.Retries}}</td></tr>
{{end}}</table>
{{range .Notes}}<p class="note">{{.}}</p>
{{end}}{{if .Server}}<h2>Server view ({{.ServerSource}})</h2>
<p class="note">The target's own metrics over each step's window: what the server saw while the step ran.</p>
<table class="server">
<tr><th>step</th><th>rate (req/s)</th><th>{{.ServerRunning}}</th><th>{{.ServerWaiting}}</th><th>KV cache max</th><th>server TTFT p50</th><th>server TTFT p95</th><th>n</th><th>client TTFT p50</th><th>client TTFT p95</th><th>network + queueing gap p50</th><th>gap p95</th><th>what the server saw</th></tr>
{{range .Server}}<tr{{if .Unavailable}} class="invalid"{{end}}><td>{{.Index}}</td><td>{{.Rate}}</td><td>{{.Running}}</td><td>{{.Waiting}}</td><td>{{.KV}}</td><td>{{.SrvP50}}</td><td>{{.SrvP95}}</td><td>{{.SrvN}}</td><td>{{.CliP50}}</td><td>{{.CliP95}}</td><td>{{.GapP50}}</td><td>{{.GapP95}}</td><td style="text-align:left">{{.Explanation}}</td></tr>
{{end}}</table>
<p class="note">{{.GapNote}}.</p>
{{end}}{{if .Matched}}<h2>Client − server per request</h2>
<table class="matched">
<tr><th>step</th><th>rate (req/s)</th><th>n</th><th>prefill gap p50</th><th>prefill gap p95</th><th>TPOT gap p50</th><th>TPOT gap p95</th></tr>
{{range .Matched}}<tr><td>{{.Index}}</td><td>{{.Rate}}</td><td>{{.N}}</td><td>{{.PrefillP50}}</td><td>{{.PrefillP95}}</td><td>{{.TPOTP50}}</td><td>{{.TPOTP95}}</td></tr>
{{end}}</table>
<p class="note">{{.MatchedNote}}.</p>
{{end}}<p class="note">TTFT = {{.TTFTTo}} − planned send (ok requests). Goodput = requests ok and within every gate / step duration (the time its arrivals ran, when they were stopped early). Capacity = the highest valid step whose good fraction (good / planned; requests still in flight when the step was summarised count as planned and not good) reached {{.Target}}; "≥" marks a lower bound (no valid step above it failed). Invalid steps (red, hollow in the chart) are never used for capacity or knee. A saturated step (orange: its backlog grew or its TTFT climbed through the step, see its note) is never the capacity and is at or past the knee. Planned counts arrivals (first attempts); dispatched, unsent and the outcome columns count attempts, retries included (planned + retries = dispatched + unsent). Knee = the first valid step whose TTFT p95 exceeds {{.Factor}} × the lowest valid step's. Goodput cannot exceed the planned rate (grey ×: planned arrivals / step duration), which varies around the offered rate with Poisson arrivals.</p>
</body>
</html>
`)

type pageRow struct {
	Index                                                      int
	Rate                                                       string
	Planned, Dispatched, Unsent, OK, Rejected, Other, Censored int
	Retries                                                    int
	TTFT50, TTFT95, E2E95, Goodput, GoodFrac, ValidCell        string
	SteadyCell                                                 string
	Valid, Saturated                                           bool
}

type classRow struct{ Class, Capacity, Knee string }

// LadderHTML writes a self-contained HTML page for a ladder: its lead (the
// verdict m carries with its exit status, the capacity, why the ladder
// stopped, the generator verdict over its steps, the server view), a
// header describing the run (m, the gates and the prober host's evidence),
// the SVG chart inline, the step table, capacity, knee, every invalid or
// abort reason, the server's view per step and the per-request client −
// server gaps where the server sent its timings.
func LadderHTML(w io.Writer, res ladderresult.LadderResult, m Meta) error {
	title := "llmprobe ladder"
	if res.Target != "" {
		title += ": " + res.Target
	}
	if !res.Started.IsZero() {
		title += " at " + res.Started.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	data := struct {
		Title, Gates, Capacity, Knee, Abort, Target, Factor, TTFTTo string
		SVG, Header, Lead                                           template.HTML
		Rows                                                        []pageRow
		Classes                                                     []classRow
		Notes                                                       []string
		Server                                                      []serverRow
		ServerSource, GapNote                                       string
		ServerRunning, ServerWaiting                                string
		Matched                                                     []matchedRow
		MatchedNote                                                 string
	}{
		Title: title, Gates: ladderGates(res),
		Capacity: capacityText(res, res.Verdict, ""),
		Knee:     kneeText(res, res.Verdict),
		Abort:    res.AbortReason,
		Target:   pct(res.GoodFractionTarget, 1), Factor: num(res.KneeFactor),
		TTFTTo: "first visible content",
		// ladderSVG escapes every text it embeds.
		SVG: template.HTML(ladderSVG(res, m)),
	}
	if m.Target == "" {
		m.Target = res.Target
	}
	header, err := headerHTML(m.header(res.Started, ladderGates(res), ladderHosts(res)))
	if err != nil {
		return err
	}
	data.Header = header
	if data.Lead, err = leadHTML(ladderLead(res, m)); err != nil {
		return err
	}
	if data.Matched = ladderMatchedRows(res); data.Matched != nil {
		data.MatchedNote = MatchedGapNote
	}
	if data.Server = serverRows(res); len(data.Server) > 0 {
		data.ServerSource, data.GapNote = ServerSource(ServerSteps(res)), GapNote
		data.ServerRunning, data.ServerWaiting = ServerHeads(ServerSteps(res))
	}
	if res.TTFTBoundary() == ledger.TTFTAnyToken {
		data.TTFTTo = "the first token of any kind (reasoning or visible content)"
	}
	for _, c := range res.Classes {
		data.Classes = append(data.Classes, classRow{Class: c.Class, Capacity: capacityShort(c.Verdict), Knee: kneeShort(c.Verdict)})
	}
	for _, st := range res.Steps {
		s := st.Summary
		data.Rows = append(data.Rows, pageRow{
			Index: st.Index, Rate: num(st.Rate), Planned: s.Planned, Dispatched: s.Dispatched, Unsent: s.Unsent,
			OK: s.Completed, Rejected: s.Rejected, Other: otherFailures(s),
			Censored: s.Censored, Retries: s.Retries,
			TTFT50: pdur(s.TTFT, s.TTFT.P50), TTFT95: pdur(s.TTFT, s.TTFT.P95), E2E95: pdur(s.E2E, s.E2E.P95),
			Goodput: num(s.GoodputPerSecond), GoodFrac: goodFraction(s), Valid: s.Validity.Valid, ValidCell: validCell(s.Validity),
			Saturated: s.Saturated(), SteadyCell: steadyCell(s),
		})
		data.Notes = append(data.Notes, stepNotes(st)...)
	}
	var b strings.Builder
	if err := ladderPage.Execute(&b, data); err != nil {
		return fmt.Errorf("report: rendering ladder HTML: %w", err)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: writing ladder HTML: %w", err)
	}
	return nil
}
