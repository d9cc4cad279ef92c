// Package budget caps one target's probe traffic per day: a number of
// requests and a number of tokens (the server's own usage figures). Admit is
// a dispatch.Admit: once a budget is spent, arrivals end unsent with reason
// budget. Charge takes finished records. Both reset at midnight in a
// configured time zone; the clock is injected so the package is testable and
// holds no global state.
package budget
