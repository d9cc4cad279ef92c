package statuspage

import (
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/durfmt"
)

// Status is what the status page shows: the daemon's view, rendered as it
// is (every figure and sentence comes from the daemon; the page only lays
// them out and escapes them).
type Status struct {
	Version string
	Started time.Time
	// Now is when the view was taken (zero: when the page is rendered).
	Now time.Time
	// Refresh is how often the page reloads itself (0: DefaultRefresh).
	Refresh time.Duration
	// Objectives names the SLO objectives the SLO rows judge against.
	Objectives string
	// Summary counts the targets in each state, worst first.
	Summary string
	Targets []TargetStatus
	// LadderSVG is the last ladder's curve as an inline SVG document, made by
	// the report package from numbers (never from target-supplied text).
	LadderSVG string
	// Fleet is this prober's place in its fleet ("" when alone).
	Fleet string
	// Host is the prober host's CPU evidence over the live verdict's
	// window (pressure, throttling, run-queue wait, busy CPU, …), what
	// tells a starved prober from a slow target ("" hides the line).
	Host string
}

// DefaultRefresh is how often the status page reloads itself.
const DefaultRefresh = 10 * time.Second

// TargetStatus is one target of the status page.
type TargetStatus struct {
	Name string
	// Target is the target's state, what the card opens with: computed
	// from the SLIs as the shipped alert rules count them.
	Target TargetState
	// Prober is the prober's validity as a badge, apart from the target's
	// state: whether its figures can be trusted, and why not.
	Prober   ProberBadge
	State    string // what the prober is doing: "probing", "ladder step 3/8", "budget spent"
	API      string
	Model    string // configured
	InFlight int
	Identity Identity
	// Latency are the baseline latency rows (figure × window), from the
	// daemon's own records.
	Latency      []LatencyRow
	Availability []AvailabilityRow
	SLO          []SLORow
	// Generator is the live generator-validity verdict ("valid", or
	// "INVALID: " and its causes); GeneratorAdvice is what to do about it.
	// Valid judges the prober, not the target.
	Generator       string
	GeneratorValid  bool
	GeneratorAdvice string
	// Capacity is the last ladder's capacity in human form ("≥ X req/s
	// (lower bound…)" for a lower bound, "unknown" before any ladder).
	Capacity           string
	CapacityLowerBound bool
	Knee               string
	// CapacityHistory are the last ladders' capacities, oldest first.
	CapacityHistory []CapacityPoint
	LastLadder      time.Time
	// LadderServer is the last ladder's server view per step (empty
	// without server_metrics).
	LadderServer []ServerStep
	// LadderServerRunning and LadderServerWaiting head the server table's
	// running and waiting columns ("slots busy/idle" and "deferred
	// start→max" for llama.cpp); "" heads them "running max" and "waiting
	// start→max".
	LadderServerRunning, LadderServerWaiting string
	LastOutcome                              string
	// DuringLadder says how many baseline requests were planned during a
	// ladder (labelled during="ladder", kept out of the SLO figures), e.g.
	// "12 of 340; labelled during a ladder now".
	DuringLadder string
	// Budget is today's spend split by use, when a budget is set.
	Budget string
	Notes  string
	// Failures are the target's last failed requests, newest first.
	Failures []Failure
	// Buffered is set when an intermediary buffers the target's streams
	// (path.go): a fact for the page to say, nil otherwise.
	Buffered *Buffered
}

// TargetState is a target's state (card.go: DOWN, REFUSED, FAILING,
// SLOW, CAPACITY REGRESSED, PROBER BLOCKED, NO DATA, TOO FEW EVENTS,
// LADDER RUNNING, OK, DISABLED), the evidence that decided it and what to
// do next.
type TargetState struct {
	State   string
	Figures string // the evidence
	Next    string
}

// Class is the state's CSS class ("ok", "slow", "failing", "down",
// "refused", "regressed", "blocked", "ladder", "disabled", "nodata").
func (t TargetState) Class() string {
	switch t.State {
	case StateOK:
		return "ok"
	case StateSlow:
		return "slow"
	case StateFailing:
		return "failing"
	case StateDown:
		return "down"
	case StateRefused:
		return "refused"
	case StateRegressed:
		return "regressed"
	case StateBlocked:
		return "blocked"
	case StateLadder:
		return "ladder"
	case StateDisabled:
		return "disabled"
	}
	return "nodata"
}

// ProberBadge is the prober's validity: Valid, or the short causes
// ("host", "cgroup", "cap", "lag", "rate") with a link to their evidence.
type ProberBadge struct {
	Valid    bool
	Causes   string // "host, lag"; "" when valid
	Evidence string // an anchor or link to the evidence ("#prober-host")
}

// Identity is what the target says it is, and when that last changed.
type Identity struct {
	Model, Version string    // "" = not seen yet / none configured
	Since          time.Time // when the identity was first seen or last changed (zero: not yet)
	Changes        int       // changes seen since the daemon started
}

// LatencyRow is one figure over one window: p50 and p99 with the number
// of samples they were read from.
type LatencyRow struct {
	Figure, Window string
	P50, P99       string
	Count          int
}

// AvailabilityRow is the availability SLI over one window: requests sent
// and failed by the target (baseline outside ladders; unsent, cancelled,
// censored and client-side artifacts are no events), Ratio the share not
// failed; the baseline sent during ladders is apart.
type AvailabilityRow struct {
	Window                   string
	Sent, Failed             int
	Ratio                    string
	DuringSent, DuringFailed int
	DuringRatio              string
}

// SLORow is one SLI's state against its objective.
type SLORow struct {
	SLI, Objective  string
	Short, Long     string // the error ratio and burn rate over the short (5 min) and long (60 min) window
	State           string
	Burning, NoData bool
}

// CapacityPoint is one ladder's capacity.
type CapacityPoint struct {
	When       time.Time
	Capacity   float64 // req/s; meaningless when None
	LowerBound bool
	None       bool // no valid step met the gates
	Aborted    bool
	Trigger    string
}

// ServerStep is one ladder step's server view.
type ServerStep struct {
	Step        int
	Rate        string
	Explanation string
	Gap         string // the network + queueing gap, "" without one
	Unavailable bool
	// Running, Waiting and KV are the step's cells as the ladder report
	// prints them ("4/0", "0→4", "n/a"); "" shows "-".
	Running, Waiting, KV string
}

// Failure is one failed request.
type Failure struct {
	When                                   time.Time
	Traffic, Class, Outcome, Reason, Error string
	Status                                 int
}

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
}).Parse(statusPageHTML))

const statusPageHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="{{.RefreshSeconds}}">
<title>llmprobe status</title>
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
.state-failing{background:#fdecee;border-color:#b00020}.state-failing .word{color:#b00020}
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
@media (max-width:40rem){body{padding:.5rem}table{font-size:.78rem}th,td{padding:.2rem .25rem}th.n,table.server td.n{white-space:normal}table.server{overflow-wrap:anywhere}.state .word{font-size:1.6rem}}
</style></head><body>
<h1>llmprobe</h1>
<p class="meta">Version {{.Version}}{{if not .Started.IsZero}}, started {{ago .Now .Started}}{{end}}; as of {{utc .Now}}, refreshed every {{.RefreshSeconds}} s.
<a href="metrics">metrics</a> · <a href="debug/requests">recent requests</a> · <a href="config">config</a> · <a href="-/ready">ready</a></p>
{{if .Summary}}<p class="summary" id="summary">{{.Summary}}</p>{{end}}
{{if .Fleet}}<p class="meta">Fleet: {{.Fleet}}. <a href="fleet/v1/ladders">fleet ladders</a></p>{{end}}
{{if .Host}}<p class="meta host" id="prober-host">Prober host {{.Host}}.</p>{{end}}
{{$now := .Now}}{{$obj := .Objectives}}
{{range .Targets}}<section class="target" id="target-{{.Name}}">
<h2>{{.Name}} {{if .Prober.Valid}}<span class="badge valid prober">prober valid</span>{{else}}<a class="badge invalid prober" href="{{.Prober.Evidence}}" title="the prober's measurements cannot be trusted: see the evidence">prober invalid: {{.Prober.Causes}}</a>{{end}} <span class="small activity">{{.State}}</span></h2>
<div class="state state-{{.Target.Class}}" data-state="{{.Target.State}}"><span class="word">{{.Target.State}}</span><span class="next">{{.Target.Next}}</span>{{if .Target.Figures}}<span class="figures">{{.Target.Figures}}</span>{{end}}</div>
<dl class="facts">
<div><dt>capacity (last ladder)</dt><dd class="capacity{{if .CapacityLowerBound}} lower-bound{{end}}">{{.Capacity}}</dd></div>
<div><dt>knee</dt><dd class="knee">{{.Knee}}</dd></div>
<div><dt>capacity, last ladders</dt><dd class="history">{{if .CapacityHistory}}{{sparkline .CapacityHistory}} <span class="history-values">{{range $i, $p := .CapacityHistory}}{{if $i}} · {{end}}{{capacity $p}}{{end}}</span>{{else}}<span class="muted">no ladder yet</span>{{end}}</dd></div>
<div><dt>last ladder</dt><dd>{{ago $now .LastLadder}}</dd></div>
<div><dt>identity</dt><dd class="identity">{{if .Identity.Model}}{{.Identity.Model}}{{else}}<span class="muted">model not seen yet</span>{{end}}{{if .Identity.Version}} · version {{.Identity.Version}}{{end}}{{if not .Identity.Since.IsZero}}<br><span class="small">{{if .Identity.Changes}}last changed {{ago $now .Identity.Since}} ({{.Identity.Changes}} changes seen){{else}}unchanged since first seen {{ago $now .Identity.Since}}{{end}}</span>{{end}}</dd></div>
<div id="generator-{{.Name}}"><dt>generator (the prober, not the target)</dt><dd class="generator small {{if .GeneratorValid}}ok{{else}}invalid{{end}}">{{.Generator}}{{if .GeneratorAdvice}}<details><summary>what to do</summary>{{.GeneratorAdvice}}</details>{{end}}</dd></div>
<div><dt>API · model configured</dt><dd>{{.API}} · {{.Model}}</dd></div>
<div><dt>in flight · last outcome</dt><dd>{{.InFlight}} · {{.LastOutcome}}</dd></div>
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
{{if $obj}}<p class="small">{{$obj}}</p>{{end}}</div>
</div>
{{if .LadderServer}}<h3>Last ladder: what the server saw (its own metrics)</h3>
<div class="scroll"><table class="server"><tr><th class="n">step</th><th class="n">rate</th><th class="n">{{or .LadderServerRunning "running max"}}</th><th class="n">{{or .LadderServerWaiting "waiting start→max"}}</th><th class="n">KV cache max</th><th>server view</th><th>network + queueing gap</th></tr>
{{range .LadderServer}}<tr><td class="n">{{.Step}}</td><td class="n">{{.Rate}}</td><td class="n">{{or .Running "-"}}</td><td class="n">{{or .Waiting "-"}}</td><td class="n">{{or .KV "-"}}</td><td{{if .Unavailable}} class="bad"{{end}}>{{.Explanation}}</td><td>{{.Gap}}</td></tr>
{{end}}</table></div>
<p class="small">gap = client TTFT minus the server's own TTFT at p50 / p95: a difference of percentiles, not a percentile of differences; in brackets the range the server's buckets allow. The server's window counts every client of the server, this daemon's baseline too.</p>{{end}}
<h3>Last failures</h3>
{{if .Failures}}<ol class="failures">{{range .Failures}}<li><span class="small">{{ago $now .When}}</span> {{.Traffic}}/{{.Class}}: <strong>{{.Outcome}}/{{.Reason}}</strong>{{if .Status}} (HTTP {{.Status}}){{end}}{{if .Error}} — {{.Error}}{{end}}</li>{{end}}</ol>{{else}}<p class="muted">none kept</p>{{end}}
<p class="small">baseline during ladders (not in the SLO): {{.DuringLadder}}{{if .Notes}}<br>{{.Notes}}{{end}}</p>
</section>
{{else}}<p>No targets.</p>{{end}}
<p class="small">Latencies: nearest-rank p50/p99 of the daemon's own baseline records (ok only, from the planned send time), read from a bounded histogram (±0.5 %) per minute over the last 5 and 60 minutes; n is the sample count. Generator: whether the prober kept its schedule over the last minute, so that its figures measure the target; "valid" says nothing about the target's health. Capacity "≥ X" is a lower bound: no valid step above X failed its gates.</p>
<h2>Last ladder</h2>
{{if .SVG}}<div class="chart">{{.SVG}}</div>{{else}}<p class="muted">No ladder has run yet.</p>{{end}}
</body></html>
`

// capacityPoint formats one ladder's capacity for the history list.
func capacityPoint(p CapacityPoint) string {
	switch {
	case p.None:
		return "none"
	case p.LowerBound:
		return "≥ " + durfmt.Rate(p.Capacity)
	}
	return durfmt.Rate(p.Capacity)
}

// sparkline draws the capacity history as a small inline SVG from numbers
// only: a line through the capacities, lower bounds hollow, ladders with
// no capacity as a cross on the axis.
func sparkline(ps []CapacityPoint) template.HTML {
	const w, h, pad = 140.0, 28.0, 3.0
	top := 0.0
	for _, p := range ps {
		if !p.None {
			top = max(top, p.Capacity)
		}
	}
	if top <= 0 {
		top = 1
	}
	x := func(i int) float64 {
		if len(ps) == 1 {
			return w / 2
		}
		return pad + float64(i)*(w-2*pad)/float64(len(ps)-1)
	}
	y := func(v float64) float64 { return h - pad - v/top*(h-2*pad) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="spark" width="%g" height="%g" viewBox="0 0 %g %g" role="img" aria-label="capacity over the last %d ladders">`, w, h, w, h, len(ps))
	var pts []string
	for i, p := range ps {
		if !p.None {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(p.Capacity)))
		}
	}
	if len(pts) > 1 {
		fmt.Fprintf(&b, `<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="%s"/>`, strings.Join(pts, " "))
	}
	for i, p := range ps {
		title := template.HTMLEscapeString(fmt.Sprintf("%s: %s req/s", p.When.UTC().Format("2006-01-02 15:04 UTC"), capacityPoint(p)))
		switch {
		case p.None:
			fmt.Fprintf(&b, `<path d="M%.1f %.1fl4 -4m0 4l-4 -4" stroke="#b00020"><title>%s</title></path>`, x(i)-2, h-pad+1, title)
		case p.LowerBound:
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="#fff" stroke="#1f77b4"><title>%s</title></circle>`, x(i), y(p.Capacity), title)
		default:
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="#1f77b4"><title>%s</title></circle>`, x(i), y(p.Capacity), title)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // numbers and escaped titles only
}

// Handler serves the page at GET /: st is called once per request (nil
// renders an empty page); log receives render errors (nil: discarded).
func Handler(st func() Status, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { render(w, st, log) })
}

func render(w http.ResponseWriter, st func() Status, log *slog.Logger) {
	var s Status
	if st != nil {
		s = st()
	}
	if s.Now.IsZero() {
		s.Now = time.Now()
	}
	if s.Refresh <= 0 {
		s.Refresh = DefaultRefresh
	}
	data := struct {
		Status
		SVG            template.HTML
		RefreshSeconds int
	}{Status: s, RefreshSeconds: max(int(s.Refresh/time.Second), 1)}
	if svg := strings.TrimSpace(s.LadderSVG); strings.HasPrefix(svg, "<svg") || strings.HasPrefix(svg, "<?xml") {
		data.SVG = template.HTML(svg) // trusted: drawn by the report package from numbers
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := statusTmpl.Execute(w, data); err != nil {
		log.Error("render status page", "err", err)
	}
}
