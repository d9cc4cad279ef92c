package statuspage

import (
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// Filter is the summary's filter, from the query (?state=FAILING&label=team:x):
// a target is shown when its state is one of States (any when none) and it
// carries every label of Labels.
type Filter struct {
	States []string
	Labels []Label
	// Note says what of the query was not understood ("" when all was).
	Note string
}

// parseFilter reads the filter from the query; a state word it does not
// know or a label not of the form name:value is named in Note (cleaned)
// and ignored.
func parseFilter(q url.Values) Filter {
	var f Filter
	var bad []string
	for _, s := range q["state"] {
		switch s = strings.ToUpper(strings.TrimSpace(s)); {
		case s == "":
		case slices.Contains(stateOrder, s):
			f.States = append(f.States, s)
		default:
			bad = append(bad, "state "+sanitize.String(s, 40))
		}
	}
	for _, l := range q["label"] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok || name == "" {
			bad = append(bad, "label "+sanitize.String(l, 80)+" (want name:value)")
			continue
		}
		f.Labels = append(f.Labels, Label{Name: name, Value: value})
	}
	if len(bad) > 0 {
		f.Note = "Ignored: " + strings.Join(bad, "; ") + "."
	}
	return f
}

// Active reports whether the filter narrows anything.
func (f Filter) Active() bool { return len(f.States) > 0 || len(f.Labels) > 0 }

// HasState reports whether s is one of the filter's states.
func (f Filter) HasState(s string) bool { return slices.Contains(f.States, s) }

// LabelText is the filter's labels as typed ("team:x").
func (f Filter) LabelText() string {
	parts := make([]string, len(f.Labels))
	for i, l := range f.Labels {
		parts[i] = l.String()
	}
	return strings.Join(parts, " ")
}

// Match reports whether t passes the filter.
func (f Filter) Match(t *TargetStatus) bool {
	if len(f.States) > 0 && !slices.Contains(f.States, t.Target.State) {
		return false
	}
	for _, want := range f.Labels {
		if !slices.Contains(t.Labels, want) {
			return false
		}
	}
	return true
}

// pageData is what the templates render.
type pageData struct {
	Status
	SVG            template.HTML
	RefreshSeconds int
	// Base leads every link back to the admin root ("" on /, "../" on
	// /targets/NAME), relative so that a proxy's path prefix holds.
	Base   string
	Filter Filter
	Counts []StateCount
	// Rows are the targets the filter shows; Cards those shown as full
	// cards below the table (Rows when at most InlineCards, else none).
	Rows, Cards []*TargetStatus
	Labelled    bool // some target has constant labels
	Card        *TargetStatus
}

// cardData is one card with what every card shows beside it.
type cardData struct {
	*TargetStatus
	Now        time.Time
	Objectives string
}

// Handler serves the summary at GET / (filtered by the query) and each
// target's card at GET /targets/NAME (404 for a name not of the name rule
// or of no target): st is called once per request (nil renders an empty
// page); log receives render errors (nil: discarded).
func Handler(st func() Status, log *slog.Logger) http.Handler { return Pages(st, nil, log) }

// Pages is Handler with one more source: one(name), called for
// /targets/NAME with a valid name, is the status of that target alone (a
// status without it: no such target), so that a target's page does not
// judge every other target; nil uses st.
func Pages(st func() Status, one func(name string) Status, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if i := strings.LastIndex(r.URL.Path, "/targets/"); i >= 0 {
			name, src := r.URL.Path[i+len("/targets/"):], st
			if one != nil && config.ValidName(name) {
				src = func() Status { return one(name) }
			}
			renderTarget(w, name, src, log)
			return
		}
		renderSummary(w, parseFilter(r.URL.Query()), st, log)
	})
}

// view is the status now, with its defaults.
func view(st func() Status, base string) pageData {
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
	d := pageData{Status: s, RefreshSeconds: max(int(s.Refresh/time.Second), 1), Base: base}
	if svg := strings.TrimSpace(s.LadderSVG); strings.HasPrefix(svg, "<svg") || strings.HasPrefix(svg, "<?xml") {
		d.SVG = template.HTML(svg) // trusted: drawn by the report package from numbers
	}
	return d
}

func renderSummary(w http.ResponseWriter, f Filter, st func() Status, log *slog.Logger) {
	d := view(st, "")
	d.Filter, d.Counts = f, stateCounts(d.Targets)
	for i := range d.Targets {
		t := &d.Targets[i]
		d.Labelled = d.Labelled || len(t.Labels) > 0
		if f.Match(t) {
			d.Rows = append(d.Rows, t)
		}
	}
	if len(d.Rows) <= InlineCards {
		d.Cards = d.Rows
	}
	execute(w, http.StatusOK, "summary", d, log)
}

func renderTarget(w http.ResponseWriter, name string, st func() Status, log *slog.Logger) {
	if !config.ValidName(name) {
		http.Error(w, "no such target: a target name is "+config.NameRule, http.StatusNotFound)
		return
	}
	d := view(st, "../")
	for i := range d.Targets {
		if d.Targets[i].Name == name {
			d.Card = &d.Targets[i]
		}
	}
	if d.Card == nil {
		http.Error(w, "no target named "+name, http.StatusNotFound) // name: of the name rule, nothing to escape
		return
	}
	d.Counts = stateCounts(d.Targets)
	execute(w, http.StatusOK, "target", d, log)
}

func execute(w http.ResponseWriter, code int, name string, d pageData, log *slog.Logger) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if err := statusTmpl.ExecuteTemplate(w, name, d); err != nil {
		log.Error("render status page", "page", name, "err", err)
	}
}
