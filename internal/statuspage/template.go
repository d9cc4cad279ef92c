package statuspage

import (
	"html/template"
	"time"

	"github.com/llmprobe/llmprobe/internal/durfmt"
)

// statusTmpl holds the page's templates: "summary" (GET /) and "target"
// (GET /targets/NAME), both built of "head", "card" and "foot".
var statusTmpl = template.Must(template.New("status").Funcs(template.FuncMap{
	"ago": func(now, t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return durfmt.Format(now.Sub(t).Round(time.Second)) + " ago"
	},
	"utc":       func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"sparkline": sparkline,
	"capacity":  capacityPoint,
	"labels":    labelText,
	"card": func(d pageData, t *TargetStatus) cardData {
		return cardData{TargetStatus: t, Now: d.Now, Objectives: d.Objectives}
	},
}).Parse(statusPageHTML + tableHTML))

const statusPageHTML = `{{define "head"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="{{.RefreshSeconds}}">
<title>{{if .Card}}{{.Card.Name}} · {{end}}llmprobe status</title>
<style>
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;padding:.8rem;max-width:80rem;color:#1d1d1f;line-height:1.35;overflow-wrap:anywhere}
h1{font-size:1.4rem;margin:.2rem 0}h2{font-size:1.2rem;margin:0 0 .4rem}h3{font-size:.95rem;margin:.8rem 0 .3rem;color:#444}
a{color:#0a58ca}
.meta{color:#555;font-size:.85rem}
section.target{border:1px solid #d0d0d0;border-radius:8px;padding:.8rem;margin:1rem 0}
.facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.3rem 1rem;margin:0}
.facts div{min-width:0}.facts dt{font-size:.75rem;color:#666;text-transform:uppercase;letter-spacing:.03em}.facts dd{margin:0 0 .3rem}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:0 1.5rem}
.cols>div{min-width:0}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;font-size:.85rem;overflow-wrap:normal}
th,td{border-bottom:1px solid #e3e3e3;padding:.25rem .35rem;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.bad{color:#b00020;font-weight:600}.ok{color:#1b7f3b}.muted{color:#777}
.small{font-size:.78rem;color:#555}
ol.failures{padding-left:1.2rem;margin:.2rem 0;font-size:.85rem}
ol.failures li{margin:.15rem 0}
.spark{vertical-align:middle}
.state{display:flex;flex-wrap:wrap;align-items:baseline;gap:.2rem 1rem;border-radius:6px;padding:.6rem .8rem;margin:.3rem 0 .6rem;border-left:.5rem solid}
.state .word{font-size:2rem;font-weight:700;letter-spacing:.02em;line-height:1.1}
.state .next{flex-basis:100%;font-size:1rem}
.state .figures{flex-basis:100%;font-size:.85rem;color:#333}
.state-ok{background:#e8f5ec;border-color:#1b7f3b}.state-ok .word{color:#1b7f3b}
.state-slow{background:#fff4e0;border-color:#c77700}.state-slow .word{color:#9a5b00}
.state-failing,.state-wrong{background:#fdecee;border-color:#b00020}.state-failing .word,.state-wrong .word{color:#b00020}
.state-down{background:#b00020;border-color:#6d0014;color:#fff}.state-down .word,.state-down .figures{color:#fff}
.state-nodata{background:#f0f0f0;border-color:#888}.state-nodata .word{color:#555}
.state-refused{background:#fdecee;border-color:#8a0016}.state-refused .word{color:#8a0016}
.state-regressed{background:#fff0e6;border-color:#c44d00}.state-regressed .word{color:#a03f00}
.state-blocked{background:#fff8d6;border-color:#8a6d00}.state-blocked .word{color:#6b5500}
.state-ladder{background:#e8f0fb;border-color:#0a58ca}.state-ladder .word{color:#0a4aa8}
.state-disabled{background:#f6f6f6;border-color:#bbb}.state-disabled .word{color:#777}
.summary{font-weight:600}
.badge{display:inline-block;font-size:.75rem;font-weight:600;border-radius:999px;padding:.1rem .55rem;vertical-align:middle;text-decoration:none;border:1px solid}
.badge.valid{color:#1b7f3b;border-color:#1b7f3b}.badge.invalid{color:#8a4b00;border-color:#c77700;background:#fff4e0}
.chart svg{max-width:100%;height:auto}
table.targets td{white-space:nowrap}table.targets td:nth-child(n+3){text-align:right;font-variant-numeric:tabular-nums}table.targets td:nth-child(6){white-space:normal;text-align:left;font-size:.78rem;color:#555}table.targets td:nth-child(2),.w{font-weight:700}
tr[data-state=OK] td:nth-child(2),.w-ok{color:#1b7f3b}tr[data-state=SLOW] td:nth-child(2),.w-slow{color:#9a5b00}tr[data-state=FAILING] td:nth-child(2),tr[data-state=DOWN] td:nth-child(2),tr[data-state=REFUSED] td:nth-child(2),tr[data-state="WRONG ANSWERS"] td:nth-child(2),.w-failing,.w-down,.w-refused,.w-wrong{color:#b00020}tr[data-state="CAPACITY REGRESSED"] td:nth-child(2),.w-regressed{color:#a03f00}tr[data-state="PROBER BLOCKED"] td:nth-child(2),.w-blocked{color:#6b5500}tr[data-state="LADDER RUNNING"] td:nth-child(2),.w-ladder{color:#0a4aa8}.w-nodata,.w-disabled{color:#666}
form.filter{margin:.4rem 0;font-size:.85rem}
@media (max-width:40rem){body{padding:.5rem}table.targets{overflow-wrap:anywhere}table.targets td{white-space:normal}table{font-size:.78rem}th,td{padding:.2rem .25rem}th.n,table.server td.n{white-space:normal}table.server{overflow-wrap:anywhere}.state .word{font-size:1.6rem}}
</style></head><body>
<h1>llmprobe</h1>
<p class="meta">Version {{.Version}}{{if not .Started.IsZero}}, started {{ago .Now .Started}}{{end}}; as of {{utc .Now}}, refreshed every {{.RefreshSeconds}} s.
<a href="{{.Base}}metrics">metrics</a> · <a href="{{.Base}}debug/requests">recent requests</a> · <a href="{{.Base}}config">config</a> · <a href="{{.Base}}-/ready">ready</a>{{if .Card}} · <a href="{{.Base}}">all targets</a>{{end}}</p>
{{end}}{{define "card"}}<section class="target" id="target-{{.Name}}">
<h2>{{.Name}} {{if .Prober.Valid}}<span class="badge valid prober">prober valid</span>{{else}}<a class="badge invalid prober" href="{{.Prober.Evidence}}" title="the prober's measurements cannot be trusted: see the evidence">prober invalid: {{.Prober.Causes}}</a>{{end}} <span class="small activity">{{.State}}</span></h2>
<div class="state state-{{.Target.Class}}" data-state="{{.Target.State}}"><span class="word">{{.Target.State}}</span><span class="next">{{.Target.Next}}</span>{{if .Target.Figures}}<span class="figures">{{.Target.Figures}}</span>{{end}}</div>
<dl class="facts">
<div><dt>capacity (last ladder)</dt><dd class="capacity{{if .CapacityLowerBound}} lower-bound{{end}}">{{.Capacity}}</dd></div>
<div><dt>knee</dt><dd class="knee">{{.Knee}}</dd></div>
<div><dt>capacity, last ladders</dt><dd class="history">{{if .CapacityHistory}}{{sparkline .CapacityHistory}} <span class="history-values">{{range $i, $p := .CapacityHistory}}{{if $i}} · {{end}}{{capacity $p}}{{end}}</span>{{else}}<span class="muted">{{if .LaddersOff}}ladders off{{else}}no ladder yet{{end}}</span>{{end}}</dd></div>
<div><dt>last ladder</dt><dd>{{if and .LaddersOff .LastLadder.IsZero}}<span class="muted">never: ladders off</span>{{else}}{{ago $.Now .LastLadder}}{{end}}</dd></div>
<div><dt>identity</dt><dd class="identity">{{if .Identity.Model}}{{.Identity.Model}}{{else}}<span class="muted">model not seen yet</span>{{end}}{{if .Identity.Version}} · version {{.Identity.Version}}{{end}}{{if not .Identity.Since.IsZero}}<br><span class="small">{{if .Identity.Changes}}last changed {{ago $.Now .Identity.Since}} ({{.Identity.Changes}} changes seen){{else}}unchanged since first seen {{ago $.Now .Identity.Since}}{{end}}</span>{{end}}</dd></div>
<div id="generator-{{.Name}}"><dt>generator (the prober, not the target)</dt><dd class="generator small {{if .GeneratorValid}}ok{{else}}invalid{{end}}">{{.Generator}}{{if .GeneratorAdvice}}<details><summary>what to do</summary>{{.GeneratorAdvice}}</details>{{end}}</dd></div>
<div><dt>API · model configured</dt><dd>{{.API}} · {{.Model}}</dd></div>
<div><dt>in flight · last outcome</dt><dd>{{.InFlight}} · {{.LastOutcome}}</dd></div>
{{if .Path}}<div class="path"><dt>the path to the model</dt><dd class="bad">{{.Path}}</dd></div>{{end}}
{{if .Budget}}<div><dt>budget today</dt><dd>{{.Budget}}</dd></div>{{end}}
</dl>
<div class="cols">
<div><h3>Baseline latency (ok requests outside ladders)</h3>
<div class="scroll"><table class="latency"><tr><th>figure</th><th>window</th><th class="n">p50</th><th class="n">p99</th><th class="n">n</th></tr>
{{range .Latency}}<tr><td>{{.Figure}}</td><td>{{.Window}}</td><td class="n p50">{{.P50}}</td><td class="n p99">{{.P99}}</td><td class="n count">{{.Count}}</td></tr>
{{end}}</table></div></div>
<div><h3>Availability (not failed / sent, baseline)</h3>
<div class="scroll"><table class="availability"><tr><th>window</th><th class="n">outside ladders</th><th class="n">during ladders</th></tr>
{{range .Availability}}<tr><td>{{.Window}}</td><td class="n">{{.Ratio}}<br><span class="small">{{.Failed}} failed of {{.Sent}}</span></td><td class="n muted">{{.DuringRatio}}<br><span class="small">{{.DuringFailed}} failed of {{.DuringSent}}</span></td></tr>
{{end}}</table></div>
<p class="small">Sent requests the target did not fail; unsent, cancelled and censored requests and client-side connection artifacts are not counted, and a slow success is the latency SLI's. During ladders: baseline requests planned while a ladder loaded the target, kept out of the SLO.</p>
<h3>SLO state</h3>
<div class="scroll"><table class="slo"><tr><th>SLI</th><th>5 min</th><th>60 min</th><th>state</th></tr>
{{range .SLO}}<tr><td>{{.SLI}} <span class="small">({{.Objective}})</span></td><td>{{.Short}}</td><td>{{.Long}}</td><td class="{{if .Burning}}bad{{else if .NoData}}muted{{else}}ok{{end}}">{{.State}}</td></tr>
{{end}}</table></div>
{{if $.Objectives}}<p class="small">{{$.Objectives}}</p>{{end}}</div>
</div>
{{if .LadderServer}}<h3>Last ladder: what the server saw (its own metrics)</h3>
<div class="scroll"><table class="server"><tr><th class="n">step</th><th class="n">rate</th><th class="n">{{or .LadderServerRunning "running max"}}</th><th class="n">{{or .LadderServerWaiting "waiting start→max"}}</th><th class="n">KV cache max</th><th>server view</th><th>network + queueing gap</th></tr>
{{range .LadderServer}}<tr><td class="n">{{.Step}}</td><td class="n">{{.Rate}}</td><td class="n">{{or .Running "-"}}</td><td class="n">{{or .Waiting "-"}}</td><td class="n">{{or .KV "-"}}</td><td{{if .Unavailable}} class="bad"{{end}}>{{.Explanation}}</td><td>{{.Gap}}</td></tr>
{{end}}</table></div>
<p class="small">gap = client TTFT minus the server's own TTFT at p50 / p95: a difference of percentiles, not a percentile of differences; in brackets the range the server's buckets allow. The server's window counts every client of the server, this daemon's baseline too.</p>{{end}}
{{if .Checks}}<h3>Answer checks (last 60 min)</h3>
<div class="scroll"><table class="checks"><tr><th>class</th><th>check</th><th class="n">passed</th><th class="n">failed</th><th class="n">not judged</th><th>fail reasons</th><th>by identity</th></tr>
{{range .Checks}}<tr><td>{{.Class}}</td><td>{{.Check}}</td><td class="n">{{.Pass}}</td><td class="n{{if .Failing}} bad{{end}}">{{.Fail}}</td><td class="n muted">{{.NotJudged}}</td><td>{{.Reasons}}</td><td class="small">{{.Identities}}</td></tr>
{{end}}</table></div>
<p class="small">Correctness: judged checks that passed (not judged: the request failed, availability's). Never the answer's text: read a failed check in /debug/requests.</p>{{end}}
<h3>Last failures</h3>
{{if .Failures}}<ol class="failures">{{range .Failures}}<li><span class="small">{{ago $.Now .When}}</span> {{.Traffic}}/{{.Class}}: <strong>{{.Outcome}}/{{.Reason}}</strong>{{if .Status}} (HTTP {{.Status}}){{end}}{{if .Error}} — {{.Error}}{{end}}</li>{{end}}</ol>{{else}}<p class="muted">none kept</p>{{end}}
<p class="small">baseline during ladders (not in the SLO): {{.DuringLadder}}{{if .Notes}}<br>{{.Notes}}{{end}}</p>
</section>
{{end}}{{define "foot"}}{{if or .Card .Cards}}<p class="small">Latencies: nearest-rank p50/p99 of the daemon's own baseline records (ok only, from the planned send time), read from a bounded histogram (±0.5 %) per minute over the last 5 and 60 minutes; n is the sample count. Generator: whether the prober kept its schedule over the last minute, so that its figures measure the target; "valid" says nothing about the target's health. Capacity "≥ X" is a lower bound: no valid step above X failed its gates.</p>{{end}}
{{if not .Card}}<h2>Last ladder</h2>
{{if .SVG}}<div class="chart">{{.SVG}}</div>{{else if .AnyLadder}}<p class="muted">No ladder has run yet.</p>{{else}}<p class="muted">No target runs ladders (ladder.enabled is false on every target).</p>{{end}}{{end}}
</body></html>
{{end}}{{define "summary"}}{{template "head" .}}
{{if .Summary}}<p class="summary" id="summary">{{.Summary}}</p>{{end}}
{{if .Fleet}}<p class="meta">Fleet: {{.Fleet}}. <a href="{{.Base}}fleet/v1/ladders">fleet ladders</a></p>{{end}}
{{if .Host}}<p class="meta host" id="prober-host">Prober host {{.Host}}.</p>{{end}}
{{template "table" .}}
{{range .Cards}}{{template "card" (card $ .)}}{{end}}{{template "foot" .}}{{end}}{{define "target"}}{{template "head" .}}
{{if .Host}}<p class="meta host" id="prober-host">Prober host {{.Host}}.</p>{{end}}
{{template "card" (card . .Card)}}{{template "foot" .}}{{end}}`
