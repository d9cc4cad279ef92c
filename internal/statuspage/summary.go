package statuspage

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// The summary: one row per target (its state word, TTFT p99 against its
// gate, availability and capacity, its constant labels), worst first, with
// filters by state and label; each target's full card is on its own page.

// InlineCards is how many targets the summary page still shows as full
// cards below the table (a prober of a few targets keeps its one page);
// above it, each card is only on /targets/NAME.
const InlineCards = 10

// Row is a target's summary row, every cell in words.
type Row struct {
	// TTFT is the worst class's first-token p99 over 60 minutes against
	// its gate ("chat 480ms / 2s"; "-" without samples); Over says the p99
	// is above the gate.
	TTFT string
	Over bool
	// Availability is the 60-minute availability with its sent count.
	Availability string
	// Capacity is the last ladder's capacity, short ("-" before any).
	Capacity string
}

// Label is one of a target's constant labels, its value cleaned.
type Label struct{ Name, Value string }

// String is the label as the filter names it ("team:x").
func (l Label) String() string { return l.Name + ":" + l.Value }

// StateCount is how many targets are in one state.
type StateCount struct {
	State, Class string
	N            int
}

// labelsOf are a target's constant labels sorted by name, every value
// through the one sanitiser (the configuration cleaned them already; the
// page does not rely on it).
func labelsOf(ls map[string]string) []Label {
	var out []Label
	for _, k := range slices.Sorted(maps.Keys(ls)) {
		out = append(out, Label{Name: sanitize.String(k, config.MaxLabelNameBytes), Value: sanitize.String(ls[k], config.MaxLabelValueBytes)})
	}
	return out
}

// summaryRow is a target's row, from its card and its classes.
func summaryRow(ts *TargetStatus, classes []ClassJudgement, facts []ClassFacts) Row {
	r := Row{TTFT: "-", Availability: "n/a", Capacity: "-"}
	worst := -1.0
	for _, c := range classes {
		p := c.ttft
		if p.Count == 0 {
			continue
		}
		gate := gateOf(facts, c.class)
		ratio := 0.0
		if gate > 0 {
			ratio = float64(p.P99) / float64(gate)
		}
		if ratio <= worst {
			continue
		}
		worst = ratio
		cell := durText(p.P99) + " / no gate"
		if gate > 0 {
			cell = durText(p.P99) + " / " + durfmt.Format(gate)
		}
		if len(classes) > 1 {
			cell = c.class + " " + cell
		}
		r.TTFT, r.Over = cell, gate > 0 && p.P99 > gate
	}
	for _, a := range ts.Availability {
		if a.Window == statusWindows[len(statusWindows)-1].name && a.Sent > 0 {
			r.Availability = fmt.Sprintf("%s of %d", a.Ratio, a.Sent)
		}
	}
	if ts.LaddersOff {
		r.Capacity = "ladders off"
	}
	if n := len(ts.CapacityHistory); n > 0 {
		r.Capacity = capacityPoint(ts.CapacityHistory[n-1])
		if !ts.CapacityHistory[n-1].None {
			r.Capacity += " req/s"
		}
	}
	return r
}

// gateOf is the TTFT gate of the class named class (0: none).
func gateOf(facts []ClassFacts, class string) time.Duration {
	for _, f := range facts {
		if f.Name == class {
			return f.TTFT
		}
	}
	return 0
}

// stateCounts count the targets per state, worst first.
func stateCounts(ts []TargetStatus) []StateCount {
	var out []StateCount
	for _, s := range stateOrder {
		n := 0
		for i := range ts {
			if ts[i].Target.State == s {
				n++
			}
		}
		if n > 0 {
			out = append(out, StateCount{State: s, Class: TargetState{State: s}.Class(), N: n})
		}
	}
	return out
}

// labelText is a row's labels cell ("team=x region=eu").
func labelText(ls []Label) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.Name + "=" + l.Value
	}
	return strings.Join(parts, " ")
}

// tableHTML is the summary table with its filter form: plain links and a
// GET form, no script.
const tableHTML = `{{define "table"}}{{if .Targets}}<form class="filter" method="get" action="{{.Base}}">
<label>state <select name="state"><option value="">any</option>{{range .Counts}}<option{{if $.Filter.HasState .State}} selected{{end}}>{{.State}}</option>{{end}}</select></label>
{{if .Labelled}}<label>label <input name="label" value="{{$.Filter.LabelText}}" placeholder="name:value" size="18"></label>{{end}}
<button>filter</button>{{if .Filter.Active}} <a href="{{.Base}}">clear</a>{{end}}
{{range .Counts}} · <a class="w w-{{.Class}}" href="{{$.Base}}?state={{.State}}">{{.N}} {{.State}}</a>{{end}}</form>
{{if .Filter.Note}}<p class="bad" id="filter-note">{{.Filter.Note}}</p>{{end}}
<p class="small" id="shown">{{len .Rows}} of {{len .Targets}} targets shown, worst first{{if gt (len .Rows) (len .Cards)}}; each name opens its card{{end}}.</p>
<div class="scroll"><table class="targets"><tr><th>target</th><th>state</th><th>TTFT p99 / gate (60 min)</th><th>availability (60 min)</th><th>capacity</th>{{if .Labelled}}<th>labels</th>{{end}}</tr>
{{range .Rows}}<tr data-state="{{.Target.State}}"><td><a href="{{$.Base}}targets/{{.Name}}">{{.Name}}</a></td><td>{{.Target.State}}{{if not .Prober.Valid}} <a class="badge invalid prober" href="{{if eq .Prober.Evidence "#prober-host"}}#prober-host{{else}}{{$.Base}}targets/{{.Name}}{{.Prober.Evidence}}{{end}}" title="the prober could not keep its schedule: its figures may describe the prober, not the target">prober invalid: {{.Prober.Causes}}</a>{{end}}</td><td{{if .Row.Over}} class="bad"{{end}}>{{.Row.TTFT}}</td><td>{{.Row.Availability}}</td><td>{{.Row.Capacity}}</td>{{if $.Labelled}}<td>{{labels .Labels}}</td>{{end}}</tr>
{{end}}</table></div>{{else}}<p>No targets.</p>{{end}}{{end}}`
