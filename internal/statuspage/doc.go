// Package statuspage is the daemon's status page, in one place: what it
// is built from, what it remembers, how a target's state is judged, how
// it is laid out and rendered.
//
// The daemon feeds it: Input holds its view at one instant (per target
// the configured name, API and model, what the prober is doing, the live
// generator verdict, the last ladder, its own texts on the budget and the
// baseline during ladders, the last failures) and each target's Memory,
// which the daemon fills as records finish (Record), ladders end
// (AddLadder; Seed reads the history file once) and the target's identity
// is read (NoteIdentity). A Memory is bounded: one-minute windows over the
// last hour, at most 64 classes, the last 20 ladders.
//
// Build lays the view out as a Status (every figure and sentence in
// words), judging each target's state (OK, SLOW, FAILING, DOWN, NO DATA)
// from its availability and latency SLIs as the shipped alert rules count
// them (internal/slo). Handler renders a Status as one self-contained HTML
// page (no external asset; every server-made text escaped; the ladder
// curve inserted only when it is an SVG the report package drew); the
// daemon hands it to admin, which serves it at /.
package statuspage
