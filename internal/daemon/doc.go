// Package daemon runs llmprobe continuously: per target and class an
// open-loop Poisson baseline stream that never stops, rate ladders on a
// timetable (and at once when the target's identity changes), daily budgets,
// and the gauges that only a running prober knows (in flight, oldest in
// flight, generator validity, budget left). It owns no measurement logic:
// schedule, dispatch, protocol, ledger, stats and ladder do the measuring;
// telemetry and admin publish.
//
// Reload swaps the target set without losing metrics or in-flight requests;
// Run drains gracefully when its context ends.
package daemon
