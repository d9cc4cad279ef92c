package report

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// leadItem is one line of an HTML report's lead: a name and what it says.
type leadItem struct{ Name, Value string }

// leadData is what an HTML report leads with: the verdict (nil: the page
// was rendered without one, e.g. from a history line) and the lines that
// explain it.
type leadData struct {
	Verdict *RunVerdict
	Items   []leadItem
}

// Class is the lead's CSS class: the verdict's result, or "unjudged".
func (d leadData) Class() string {
	if d.Verdict == nil {
		return "unjudged"
	}
	return d.Verdict.class()
}

// leadTemplate renders the lead: the verdict in large type, then a table
// of its evidence.
var leadTemplate = template.Must(template.New("lead").Parse(`<div class="lead {{.Class}}">
{{with .Verdict}}<p class="verdict"><strong class="result">{{.Result}}</strong> <span class="exit">exit status {{.Exit}}</span>{{if .Cause}} <span class="cause">cause: the {{.Cause}}</span>{{end}}<br>{{if .Wrong}}<strong class="wrong">WRONG ANSWERS:</strong> <span class="wrong">{{.Wrong}}</span>{{if .Why}}; {{end}}{{end}}<span class="why">{{.Why}}</span></p>
{{else}}<p class="verdict"><strong class="result">NOT JUDGED</strong> <span class="why">this page was rendered without the command's verdict</span></p>
{{end}}<table class="lead">
{{range .Items}}<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>
{{end}}</table>
</div>
`))

// leadHTML renders d.
func leadHTML(d leadData) (template.HTML, error) {
	var b strings.Builder
	if err := leadTemplate.Execute(&b, d); err != nil {
		return "", fmt.Errorf("report: rendering the verdict: %w", err)
	}
	return template.HTML(b.String()), nil // escaped by the template
}

// probeLead is a probe's lead: its verdict, the gates against the good
// fraction, the requests' outcomes, the answer checks (probe --checks:
// first when one failed, else after the outcomes), the generator verdict
// and the server view (when one was read).
func probeLead(s stats.Summary, server *servermetrics.View, m Meta) leadData {
	d := leadData{Verdict: m.Verdict}
	gl := gates(s.Gates)
	if !s.Gates.IsZero() {
		gl += fmt.Sprintf(": good %d of %d planned, good fraction %s", s.Good, s.Planned+s.Pending-s.InjectedCancels, goodFraction(s))
	}
	checks := leadItem{"answer checks", checksLead(m.Checks)}
	if len(FailedChecks(m.Checks)) > 0 { // wrong answers lead the evidence
		d.Items = append(d.Items, checks)
	}
	d.Items = append(d.Items, leadItem{"gates", gl}, leadItem{"requests", outcomesLead(s, m.Path)})
	if len(m.Checks) > 0 && len(FailedChecks(m.Checks)) == 0 {
		d.Items = append(d.Items, checks)
	}
	d.Items = append(d.Items, leadItem{"generator", generatorLead(s.Validity)})
	if server != nil {
		d.Items = append(d.Items, leadItem{"server view", server.Explanation + " (section below)"})
	}
	return d
}

// ladderLead is a ladder's lead: its verdict, capacity, why it stopped,
// the generator verdict over its steps and the server view (when one was
// read).
func ladderLead(res ladderresult.LadderResult, m Meta) leadData {
	d := leadData{Verdict: m.Verdict}
	d.Items = append(d.Items, leadItem{"capacity", capacityShort(res.Verdict) + " — gates: " + ladderGates(res)},
		leadItem{"stopped", stopLead(res)}, leadItem{"generator", ladderGeneratorLead(res)})
	if steps := ServerSteps(res); steps != nil {
		d.Items = append(d.Items, leadItem{"server view", ladderServerLead(steps)})
	}
	return d
}

// outcomesLead is the planned requests and every outcome with a count,
// with its reasons: "planned 50; ok 47, http_error 3 (not_found 3: …)".
func outcomesLead(s stats.Summary, path string) string {
	var parts []string
	for _, o := range ledger.Outcomes {
		n := s.Outcomes.ByOutcome[o]
		if n == 0 {
			continue
		}
		p := fmt.Sprintf("%s %d", o, n)
		if o != ledger.OK {
			if rs := reasonsAt(s.Outcomes.ByReason[o], path); rs != "" {
				p += " (" + rs + ")"
			}
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return fmt.Sprintf("planned %d; none ended", s.Planned)
	}
	return fmt.Sprintf("planned %d; %s", s.Planned, strings.Join(parts, ", "))
}

// ladderServerLead says whether the ladder's steps carry the server's view.
func ladderServerLead(steps []ServerStep) string {
	n := 0
	for _, s := range steps {
		if s.View != nil && !s.View.Unavailable {
			n++
		}
	}
	return fmt.Sprintf("%s: %d of %d steps (section below)", ServerSource(steps), n, len(steps))
}

// reasonsAt is reasons, naming the path requested beside a not_found (a
// 404 is often a wrong path or model): "not_found 3 (404 for
// /v1/chat/completions)". path is Meta.Path: ours, not the server's, and
// sanitised by the command all the same.
func reasonsAt(m map[ledger.Reason]int, path string) string {
	rs := reasons(m)
	if path == "" || m[ledger.ReasonNotFound] == 0 {
		return rs
	}
	nf := fmt.Sprintf("%s %d", ledger.ReasonNotFound, m[ledger.ReasonNotFound])
	return strings.Replace(rs, nf, nf+" (404 for "+path+")", 1)
}
