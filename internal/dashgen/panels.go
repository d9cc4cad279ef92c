package dashgen

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
	"github.com/grafana/grafana-foundation-sdk/go/units"
	"github.com/grafana/grafana-foundation-sdk/go/xychart"
)

// Units used by the panels; every panel sets one.
const (
	unitSeconds     = units.Seconds
	unitReqPerSec   = units.RequestsPerSecond
	unitRatio       = units.PercentUnit
	unitCount       = units.Short
	unitTokPerSec   = "suffix: tok/s"
	unitTokens      = "suffix: tok"
	unitBurn        = "suffix: ×"
	unitFromNow     = "dateTimeFromNow"
	unitNone        = units.NoUnit
	unitSuffixCores = "suffix: cores"
)

// Expect says when a dashboard query must return data on a Prometheus that
// scrapes a running llmprobe probing the simulator.
type Expect string

const (
	// ExpectAlways: the query returns data as soon as baseline probing has
	// run for a few scrape intervals.
	ExpectAlways Expect = "always"
	// ExpectRules: the query reads a recording rule of alerts/, so it returns
	// data once the rules are loaded and have been evaluated.
	ExpectRules Expect = "rules"
	// ExpectLadder: the query reads ladder results, present only after a
	// ladder has completed.
	ExpectLadder Expect = "ladder"
	// ExpectMaybe: the query may legitimately be empty (for example unsent
	// requests or budgets that are not configured).
	ExpectMaybe Expect = "maybe"
)

// AnnotationPrefix starts the Panel field of a Query that is an annotation query.
const AnnotationPrefix = "annotation: "

// q is one Prometheus query of a panel.
type q struct {
	expr    string
	legend  string
	instant bool
	heatmap bool
	expect  Expect
}

func query(expr, legend string) q { return q{expr: expr, legend: legend, expect: ExpectAlways} }

func (x q) want(e Expect) q { x.expect = e; return x }
func (x q) asInstant() q    { x.instant = true; return x }

// dsRef is the panel and query datasource: the dashboard's datasource variable.
func dsRef() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}
}

// targets turns queries into SDK dataquery builders with stable refIds. The
// expectation of each query lives in the Go model only (see Queries); the JSON
// carries plain Prometheus queries.
func targets(qs []q) []cog.Builder[variants.Dataquery] {
	out := make([]cog.Builder[variants.Dataquery], 0, len(qs))
	for i, x := range qs {
		b := prometheus.NewDataqueryBuilder().
			Datasource(dsRef()).
			RefId(refID(i)).
			Expr(x.expr).
			LegendFormat(x.legend)
		switch {
		case x.heatmap:
			b = b.Format(prometheus.PromQueryFormatHeatmap).Range()
		case x.instant:
			b = b.Format(prometheus.PromQueryFormatTable).Instant()
		default:
			b = b.Range()
		}
		out = append(out, b)
	}
	return out
}

func refID(i int) string { return string(rune('A' + i)) }

// panel is the generator's description of one panel; build turns it into an
// SDK builder and records its queries.
type panel struct {
	kind        string // timeseries, stat, heatmap, xychart, table
	title       string
	description string
	unit        string
	width       uint32
	height      uint32
	min         *float64
	max         *float64
	queries     []q
	// xy charts: the unit of the x field (query A).
	xUnit string
	// noValue is shown instead of "No data" when the queries return
	// nothing (e.g. a budget panel with no budget configured).
	noValue string
}

func (p panel) build() cog.Builder[dashboard.Panel] {
	w, h := p.width, p.height
	if w == 0 {
		w = 12
	}
	if h == 0 {
		h = 8
	}
	switch p.kind {
	case "stat":
		b := stat.NewPanelBuilder().Title(p.title).Description(p.description).
			Datasource(dsRef()).Unit(p.unit).Span(w).Height(h).
			Targets(targets(p.queries)).
			GraphMode(common.BigValueGraphModeArea).
			ColorMode(common.BigValueColorModeValue).
			ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Values(false))
		if p.noValue != "" {
			b = b.NoValue(p.noValue)
		}
		if p.min != nil {
			b = b.Min(*p.min)
		}
		if p.max != nil {
			b = b.Max(*p.max)
		}
		return b
	case "heatmap":
		b := heatmap.NewPanelBuilder().Title(p.title).Description(p.description).
			Datasource(dsRef()).Unit(p.unit).Span(w).Height(h).
			Targets(targets(p.queries)).
			Calculate(false).
			YAxis(heatmap.NewYAxisConfigBuilder().Unit(p.unit)).
			CellValues(heatmap.NewCellValuesBuilder().Unit(unitReqPerSec)).
			Color(heatmap.NewHeatmapColorOptionsBuilder().
				Mode(heatmap.HeatmapColorModeScheme).
				Scheme("Oranges").
				Scale(heatmap.HeatmapColorScaleExponential).
				Exponent(0.5).
				Steps(64).
				Fill("dark-orange")).
			RowsFrame(heatmap.NewRowsHeatmapOptionsBuilder().Layout(common.HeatmapCellLayoutLe))
		if p.noValue != "" {
			b = b.NoValue(p.noValue)
		}
		return b
	case "xychart":
		return xychart.NewPanelBuilder().Title(p.title).Description(p.description).
			Datasource(dsRef()).Unit(p.unit).Span(w).Height(h).
			Targets(targets(p.queries)).
			WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}}).
			Show(xychart.XYShowModePointsAndLines).
			Mapping(xychart.SeriesMappingAuto).
			Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderNone)).
			Legend(common.NewVizLegendOptionsBuilder().DisplayMode(common.LegendDisplayModeList).Placement(common.LegendPlacementBottom).ShowLegend(true)).
			OverrideByName("Value #A", []dashboard.DynamicConfigValue{{Id: "unit", Value: p.xUnit}})
	case "table":
		return table.NewPanelBuilder().Title(p.title).Description(p.description).
			Datasource(dsRef()).Unit(p.unit).Span(w).Height(h).
			Targets(targets(p.queries))
	default:
		b := timeseries.NewPanelBuilder().Title(p.title).Description(p.description).
			Datasource(dsRef()).Unit(p.unit).Span(w).Height(h).
			Targets(targets(p.queries)).
			LineWidth(1).FillOpacity(10).
			Legend(common.NewVizLegendOptionsBuilder().
				DisplayMode(common.LegendDisplayModeTable).
				Placement(common.LegendPlacementBottom).
				ShowLegend(true).
				Calcs([]string{"lastNotNull", "max"}))
		if p.noValue != "" {
			b = b.NoValue(p.noValue)
		}
		if p.min != nil {
			b = b.Min(*p.min)
		}
		if p.max != nil {
			b = b.Max(*p.max)
		}
		return b
	}
}

// row is a titled group of panels.
type row struct {
	title  string
	panels []panel
}

// board is the generator's description of one dashboard.
type board struct {
	uid         string
	file        string
	title       string
	description string
	traffic     bool  // the traffic and during variables
	mixin       Mixin // set by boards
	annotations []annotation
	rows        []row
}

// annotation is a Prometheus annotation query of a dashboard.
type annotation struct {
	name, expr, title string
}

func (a annotation) build() cog.Builder[dashboard.AnnotationQuery] {
	return dashboard.NewAnnotationQueryBuilder().
		Name(a.name).
		Datasource(dsRef()).
		Enable(true).
		IconColor("orange").
		Target(prometheus.NewDataqueryBuilder().
			Datasource(dsRef()).
			RefId("Anno").
			Expr(a.expr)).
		TitleFormat(a.title).
		Step("60s")
}

// build renders the board in Grafana's v1 dashboard schema. The Foundation
// SDK marks dashboard.Dashboard deprecated in favour of dashboardv2, but the
// shipped JSON is the v1 file-provisioning format that every supported
// Grafana loads; v2 changes the file format and needs Grafana 12's v2 API.
// Hence the lint:ignore directives below (issue 11: chose to keep v1).
//
//lint:ignore SA1019 the committed dashboards are Grafana's v1 provisioning schema (see above)
func (b board) build() (dashboard.Dashboard, error) {
	//lint:ignore SA1019 v1 provisioning schema (see build's comment)
	db := dashboard.NewDashboardBuilder(b.title).
		Uid(b.uid).
		Description(b.description).
		Tags([]string{"llmprobe", "generated"}).
		Refresh("30s").
		Time("now-3h", "now").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Readonly().
		Link(dashboard.NewDashboardLinkBuilder("llmprobe").
			Type(dashboard.DashboardLinkTypeDashboards).
			Tags([]string{"llmprobe"}).
			AsDropdown(true).
			KeepTime(true).
			IncludeVars(true))
	for _, v := range variables(b.mixin, b.traffic) {
		db = db.WithVariable(v)
	}
	for _, a := range b.annotations {
		db = db.Annotation(a.build())
	}
	for _, r := range b.rows {
		db = db.WithRow(dashboard.NewRowBuilder(r.title))
		for _, p := range r.panels {
			db = db.WithPanel(p.build())
		}
	}
	d, err := db.Build()
	if err != nil {
		//lint:ignore SA1019 v1 provisioning schema (see build's comment)
		return dashboard.Dashboard{}, fmt.Errorf("dashgen: building dashboard %q: %w", b.uid, err)
	}
	numberPanels(d.Panels)
	return d, nil
}

// numberPanels gives every panel and row a unique id, 1, 2, … in layout
// order: Grafana keys links to a panel (viewPanel, editPanel), library
// panels and its own state by id, and would otherwise number them itself,
// differently in each Grafana that loads the file.
func numberPanels(ps []dashboard.PanelOrRowPanel) {
	id := uint32(0)
	for _, p := range ps {
		id++
		switch {
		case p.Panel != nil:
			p.Panel.Id = cog.ToPtr(id)
		case p.RowPanel != nil:
			p.RowPanel.Id = id
			for i := range p.RowPanel.Panels { // a collapsed row holds its panels
				id++
				p.RowPanel.Panels[i].Id = cog.ToPtr(id)
			}
		}
	}
}

// queries lists the board's queries with their expectations, in panel order.
func (b board) queries() []Query {
	var out []Query
	for _, a := range b.annotations {
		out = append(out, Query{Dashboard: b.uid, Panel: AnnotationPrefix + a.name, RefID: "Anno", Expr: a.expr, Expect: ExpectMaybe})
	}
	for _, r := range b.rows {
		for _, p := range r.panels {
			for i, x := range p.queries {
				out = append(out, Query{
					Dashboard: b.uid,
					Panel:     p.title,
					RefID:     refID(i),
					Expr:      x.expr,
					Instant:   x.instant,
					Expect:    x.expect,
				})
			}
		}
	}
	return out
}

func f64(v float64) *float64 { return &v }
