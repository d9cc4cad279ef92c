// Package wiring is where the configuration meets the domain. Package
// config describes what to probe and how, and imports no domain package;
// wiring turns that description into the domain's values: the checks only
// the owners' parsers can make (Checks, Load), and a target's run,
// assembled in one call (NewPlan): its protocol client, workload classes
// and prompt streams, executors (the baseline's with cancellation
// injection, the ladder's with first-token marking), retry and backoff,
// budget, ladder and server-metrics reader. The one-shot commands execute
// the Plan (Probe, RunLadder) and the daemon runs its executors in its own
// group, so the two paths cannot drift.
package wiring
