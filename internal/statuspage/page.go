package statuspage

import (
	"fmt"
	"html/template"
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

// AnyLadder reports whether some target has a ladder (LaddersOff false).
func (s Status) AnyLadder() bool {
	for _, t := range s.Targets {
		if !t.LaddersOff {
			return true
		}
	}
	return false
}

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
	// LaddersOff: the target has no ladder (ladder.enabled false), so no
	// capacity is coming; the card says so rather than "no ladder yet".
	LaddersOff bool
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
	// Checks are the target's answer checks over the last 60 minutes,
	// failing first (answers.go): results, fail reasons with counts,
	// identities; never an answer's text.
	Checks []CheckRow
	// Buffered is set when an intermediary buffers the target's streams
	// (path.go): a fact for the page to say, nil otherwise.
	Buffered *Buffered
	// Path is the finding about the path to the model in words (an
	// intermediary buffering the stream), "" for none.
	Path string
	// Labels are the target's constant labels, sorted by name.
	Labels []Label
	// Row is the target's summary row.
	Row Row
}

// TargetState is a target's state (card.go: DOWN, REFUSED, FAILING,
// WRONG ANSWERS, SLOW, CAPACITY REGRESSED, PROBER BLOCKED, NO DATA, TOO FEW EVENTS,
// LADDER RUNNING, OK, DISABLED), the evidence that decided it and what to
// do next.
type TargetState struct {
	State   string
	Figures string // the evidence
	Next    string
}

// Class is the state's CSS class ("ok", "slow", "failing", "wrong", "down",
// "refused", "regressed", "blocked", "ladder", "disabled", "nodata").
func (t TargetState) Class() string {
	switch t.State {
	case StateOK:
		return "ok"
	case StateSlow:
		return "slow"
	case StateFailing:
		return "failing"
	case StateWrong:
		return "wrong"
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
	// Version is the identity the ladder measured ("model version"), set
	// where it differs from the point before (the first point's too).
	Version string
	// Partial: a deploy or restart cut the ladder (a lower bound of Version's).
	Partial bool
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

// capacityPoint formats one ladder's capacity for the history list.
func capacityPoint(p CapacityPoint) string {
	var txt string
	switch {
	case p.None:
		txt = "none"
	case p.LowerBound:
		txt = "≥ " + durfmt.Rate(p.Capacity)
	default:
		txt = durfmt.Rate(p.Capacity)
	}
	switch {
	case p.Version != "" && p.Partial:
		txt += " (" + p.Version + ", cut by a deploy)"
	case p.Version != "":
		txt += " (" + p.Version + ")"
	case p.Partial:
		txt += " (cut by a deploy)"
	}
	return txt
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
