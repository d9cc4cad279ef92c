// Package verdict judges the load generator, never the target: whether it
// did what was asked, so that its measurements can be trusted.
//
// The generator-validity rule is one function, ValidityConfig.Judge: a
// cohort's Accumulator (internal/stats) and the daemon's LiveValidity
// window both feed it Evidence (exact counts of dispatch lags above the
// configured limit and above its hard limit, judged by a one-sided
// binomial test against 1 %: LagSignificant; the in-flight cap's unsent
// arrivals, the rate, the prober host's health), and it names each cause
// of an invalid verdict (internal/cause, the one table) with what to do. A
// late generator is blamed on its host (host_starved, cgroup_throttled)
// only when HostHealth shows it lacked CPU over the same window.
// LiveValidity holds an invalid verdict until a clean window. A fleet
// step's verdict (FleetValidity) names missing and invalid shards, and its
// host evidence is the most starved shard's (FleetHost). JudgeSteady is
// the saturation rule on a ladder step's steady-state evidence.
//
// It is pure: no I/O, no clock.
package verdict
