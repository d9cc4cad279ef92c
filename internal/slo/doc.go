// Package slo owns the service-level objectives llmprobe ships: the
// availability and latency objectives of the baseline SLIs, what each SLI
// counts (Availability: the outcomes that are no events, the failures),
// the correctness objective of the answer checks (correctness.go: pass /
// (pass + fail); not_judged is availability's), the minimum-event guard,
// the multiwindow burn-rate tiers (Google SRE workbook) that page or open
// a ticket, and a target's state (OK, SLOW,
// FAILING, DOWN, NO DATA) judged at the first page tier.
//
// The alert rules (internal/dashgen) and the daemon's status page read the
// same values from here, so the page never judges by other numbers than
// the alerts do. A leaf: it imports nothing of the project.
package slo
