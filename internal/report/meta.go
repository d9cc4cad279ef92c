package report

import (
	"fmt"
	"html/template"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
)

// Meta describes a run for the head of its HTML and SVG reports: what an
// engineer pasting the report into a postmortem needs to reproduce it.
// Commands fill it; every field is optional. Command and Target must
// already be redacted (no credentials, no secret query values): the
// reports print them as they are, HTML-escaped.
type Meta struct {
	Version string // llmprobe's build version
	Command string // the command line, redacted
	Target  string // the target URL without credentials or query, or the built-in simulator
	Model   string
	API     string
	// Window is each ladder step's arrival window (ladder), or the run's
	// (probe); WindowName says which ("step duration", "window").
	Window     time.Duration
	WindowName string
	Arrival    string // arrival process, e.g. "poisson", "gamma (k = 0.5)", "closed loop, 8 users"
	Seed       uint64
	SeedSet    bool      // Seed was resolved (0 can be a seed)
	Started    time.Time // when the run began (probe; a ladder's result carries its own)
	// Path is the path the requests were sent to (the configured URL's
	// path and the API's endpoint, e.g. /v1/chat/completions), sanitised:
	// the reports name it beside a not_found (404).
	Path string
	// Verdict is the command's verdict on the run, the one its exit
	// status comes from: the HTML reports lead with it (nil: rendered
	// without one, "NOT JUDGED").
	Verdict *RunVerdict
	// Checks are the probe's answer checks (probe --checks), one row per
	// configured check: the text, HTML and JSON reports carry the table
	// (nil: the run sent no checks, and no report mentions them).
	Checks []CheckRow
}

// svgLine is the run's description under the SVG's title.
func (m Meta) svgLine() string {
	var parts []string
	if m.Version != "" {
		parts = append(parts, "llmprobe "+m.Version)
	}
	if m.Model != "" {
		parts = append(parts, "model "+m.Model)
	}
	if m.API != "" {
		parts = append(parts, "API "+m.API)
	}
	if m.Window > 0 {
		parts = append(parts, m.windowName()+" "+dur(m.Window))
	}
	if m.Arrival != "" {
		parts = append(parts, "arrivals "+m.Arrival)
	}
	if m.SeedSet {
		parts = append(parts, fmt.Sprintf("seed %d", m.Seed))
	}
	return strings.Join(parts, " · ")
}

func (m Meta) windowName() string {
	if m.WindowName != "" {
		return m.WindowName
	}
	return "step duration"
}

// headerField is one row of a report's header table.
type headerField struct {
	Name  string
	Value string
	List  []string // several values, one per line (host evidence per step)
}

// header lists a run's description: build, command, target, model, API,
// window, arrival process, seed, gates, when it started and the prober
// host's evidence (one line per step for a ladder).
func (m Meta) header(started time.Time, gates string, hosts []string) []headerField {
	var f []headerField
	add := func(name, v string) {
		if v != "" {
			f = append(f, headerField{Name: name, Value: v})
		}
	}
	add("llmprobe version", m.Version)
	add("command", m.Command)
	add("target", m.Target)
	add("model", m.Model)
	add("API", m.API)
	if m.Window > 0 {
		add(m.windowName(), dur(m.Window))
	}
	add("arrival process", m.Arrival)
	if m.SeedSet {
		add("seed", fmt.Sprint(m.Seed))
	}
	add("gates", gates)
	if !started.IsZero() {
		add("started", started.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	switch len(hosts) {
	case 0:
		add("prober host", "not measured")
	case 1:
		add("prober host", hosts[0])
	default:
		f = append(f, headerField{Name: "prober host", List: hosts})
	}
	return f
}

// ladderHosts is each step's host evidence, "step N: …".
func ladderHosts(res ladderresult.LadderResult) []string {
	var out []string
	for _, st := range res.Steps {
		if h := st.Summary.Validity.Host; h.Known {
			out = append(out, fmt.Sprintf("step %d: %s", st.Index, h))
		}
	}
	return out
}

// pageCSS is the style every HTML report shares.
const pageCSS = `body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; }
table.header th, table.header td { text-align: left; vertical-align: top; }
table.header td { font-family: monospace; white-space: pre-wrap; overflow-wrap: anywhere; }
table.header td.list div { margin: 0; }
tr.invalid td { color: #a00; }
tr.saturated td { color: #b35c00; }
p.note { color: #555; font-size: 13px; }
div.lead { border: 2px solid #999; border-radius: 4px; padding: 0.6em 1em; margin: 1em 0; max-width: 70em; }
div.lead.pass { border-color: #2a7d2a; background: #f2faf2; }
div.lead.fail { border-color: #b00; background: #fdf2f2; }
div.lead.invalid { border-color: #b35c00; background: #fff7ee; }
div.lead p.verdict { margin: 0 0 0.5em 0; }
div.lead strong.result { font-size: 28px; letter-spacing: 1px; }
div.lead.pass strong.result { color: #2a7d2a; }
div.lead.fail strong.result { color: #b00; }
div.lead.invalid strong.result { color: #b35c00; }
div.lead span.exit, div.lead span.cause { font-size: 16px; margin-left: 0.5em; }
div.lead strong.wrong { color: #b00; letter-spacing: 1px; }
tr.failed td { color: #b00; }
table.checks td.name, table.checks td.reasons { text-align: left; }
table.lead { font-size: 14px; }
table.server, table.gap, table.matched { margin: 0.5em 0; }
table.lead th, table.lead td { text-align: left; vertical-align: top; border: none; background: none; padding: 2px 8px 2px 0; }
`

// headerTemplate renders a header as a table (class "header").
var headerTemplate = template.Must(template.New("header").Parse(`<table class="header">
{{range .}}<tr><th>{{.Name}}</th>{{if .List}}<td class="list">{{range .List}}<div>{{.}}</div>{{end}}</td>{{else}}<td>{{.Value}}</td>{{end}}</tr>
{{end}}</table>
`))

// headerHTML renders fields as an HTML table.
func headerHTML(fields []headerField) (template.HTML, error) {
	var b strings.Builder
	if err := headerTemplate.Execute(&b, fields); err != nil {
		return "", fmt.Errorf("report: rendering header: %w", err)
	}
	return template.HTML(b.String()), nil // escaped by the template
}

// sortedClasses are a class-keyed map's names in order.
func sortedClasses[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
