// Package probehandler is the admin server's /probe endpoint, in the
// manner of Prometheus' blackbox_exporter: Prometheus scrapes
// /probe?target=…&module=… and each scrape sends one streamed request (or
// the module's short burst, planned open loop when the scrape arrives) and
// answers with what happened as probe_* metrics, from a registry made for
// that scrape alone.
//
// A target is the name of a configured target (its own client, key and
// budget) or a URL under one of probe.allowed_targets (urlprefix); nothing
// else is ever sent to. A probe's requests go the one way every request
// goes: a dispatch.Group (the daemon's) through the protocol client, each
// a ledger record of traffic "probe" that reaches the daemon's sinks (the
// ring behind /debug/requests, the rotating files, the llmprobe_* series);
// the Collector, one of those sinks, hands each probe its own records.
//
// The daemon builds the Handler and gives it to the admin server as an
// http.Handler: admin does not import this package.
package probehandler
