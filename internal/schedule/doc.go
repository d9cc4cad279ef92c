// Package schedule generates arrival times for open-loop load and think times
// for closed-loop users. It is pure: no clock, no I/O, no global state. A
// Sequence is a deterministic function of its seed, its arrival process and
// its step plan; the dispatcher turns its offsets into absolute send times.
//
// Arrival processes are Poisson (exponential gaps, CV 1), constant (fixed
// gaps, CV 0) and gamma (shape k: CV 1/sqrt(k); k = 1 is Poisson, k < 1 is
// burstier). Rates that change in steps use time rescaling: unit-mean gaps
// are drawn in "operational time" and mapped through the inverse of the
// piecewise-linear cumulative rate Λ(t), so a rate change takes effect
// exactly at its step boundary and a zero-rate step produces no arrivals.
//
// Phase: constant arrivals sit half an interval into their slots, each step
// starting its own grid (t0 + (j + ½)/r), so a step plans exactly r·W
// arrivals when r·W is whole and none falls on a step boundary. Poisson and
// gamma streams are stationary from offset 0 (the first gap is drawn from
// the equilibrium distribution), so their mean count over a window is
// exactly r·W.
package schedule
