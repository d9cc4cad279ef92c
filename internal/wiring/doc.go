// Package wiring is where the configuration meets the domain. Package
// config describes what to probe and how, and imports no domain package;
// wiring turns that description into the domain's values: the checks only
// the owners' parsers can make (Checks, Load), one protocol client per
// target (Client), the workload classes (Classes), the dispatch plan
// (Retry, Injection, Budget, Baseline) and the ladder (Ladder). The daemon
// and the one-shot commands (probe, ladder) build their runs through it
// alone, so the two paths cannot drift.
package wiring
