// Package statuspage is the daemon's status page, in one place: what it
// is built from, what it remembers, how a target's state is judged, how
// it is laid out and rendered.
//
// The daemon feeds it typed facts, never sentences: Input holds its view
// at one instant (per target the configured name, API and model, the
// ladder running now, the baseline held out of the SLO, the budget, what
// the configuration enables, each class's TTFT gate, the live generator
// verdict, the last ladder and when the next runs, the last failures,
// already cleaned) and each target's Memory,
// which the daemon fills as records finish (Record), ladders end
// (AddLadder; Seed reads the history file once) and the target's identity
// is read (NoteIdentity). A Memory is bounded: one-minute windows over the
// last hour, at most 64 classes, the last 20 ladders.
//
// Build lays the view out as a Status (every figure and sentence in
// words, durations and rates by internal/durfmt), judging each target's
// state (card.go: DOWN, REFUSED, FAILING, WRONG ANSWERS, SLOW, CAPACITY
// REGRESSED, PROBER BLOCKED, NO DATA, TOO FEW EVENTS, LADDER RUNNING, OK,
// DISABLED) with its evidence and next step, from its availability,
// latency and correctness SLIs as the shipped alert rules count them
// (internal/slo; correctness from the daemon's tally of answer checks,
// answers.go), the capacity
// regression alerts' threshold (internal/dashgen) and the facts; the
// cards are sorted worst first under a summary line. JudgeTarget is the
// same judgement for the daemon's state log. Handler renders a Status as
// self-contained HTML pages (no external asset, no script; every
// server-made text escaped; the ladder curve inserted only when it is an
// SVG the report package drew): at / a summary row per target (summary.go:
// state, TTFT p99 against its gate, availability, capacity, labels), worst
// first, filtered by ?state= and ?label= (route.go), with the full cards
// inline up to InlineCards shown targets; at /targets/NAME one target's
// card. The daemon hands it to admin, which serves both routes.
package statuspage
