// Package daemon runs llmprobe continuously: per target and class an
// open-loop baseline stream that never stops, rate ladders on a timetable
// (and at once when the target's identity changes), daily budgets, and the
// gauges that only a running prober knows (in flight, oldest in flight,
// generator validity with its causes and the largest dispatch lag, judged
// by verdict.LiveValidity with the target's configured limit and the host's
// health from hostload, budget left), refreshed at every scrape. It owns no
// measurement logic: schedule, dispatch, protocol, ledger, stats and ladder
// do the measuring; telemetry and admin publish.
//
// Every request of every stream belongs to one dispatch.Group recording
// into one ledger, so each planned arrival ends exactly once whatever
// happens to the streams. Reload is the one reload path (SIGHUP,
// POST /-/reload, a target file's change): it loads the configuration
// (Options.Load), builds the whole new target set before
// stopping anything (a set that cannot be built is refused and the old one
// keeps running); old streams stop planning while their requests finish,
// and a target's in-flight set, validity window, budget and identity carry
// over; then it applies the configuration to Options.Reloaders, in order,
// as Prometheus' ApplyConfig does. Run drains gracefully when its context ends: what is still in
// flight at the drain deadline is censored.
package daemon
