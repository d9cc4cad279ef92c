// Package fleet runs llmprobe as a fleet: N probers (shards) that split a
// target's baseline and ladders between them and are judged as one.
//
// A shard knows its place (Identity: shard INDEX of COUNT, from a flag,
// the configuration or a StatefulSet pod name) and its peers (Peers: admin
// base URLs, or one DNS name resolving to every pod). Shard 0 is the
// coordinator. Every shard offers 1/N of each rate (the superposition of N
// independent Poisson streams of rate λ/N is a Poisson stream of rate λ).
//
// A fleet ladder is announced by the coordinator (Announcement: an id, a
// wall-clock start and the step rates); every shard computes the same
// timetable from it and its own configuration (step i starts at start +
// (i−1)·(step_duration + settle + gap)) and offers its share of step i
// through its own ladder.Runner (a ladder.Session), judged by its own abort
// rules, while the coordinator allows it. Each shard serves its per-step
// results (counts and mergeable latency sketches, stats.Part) on its admin
// server (Handler, under /fleet/v1/). The coordinator gathers them within
// each step's settle window, merges them (stats.Merge), judges the merged
// steps with the one ladder judge (ladder.AbortRules.Check,
// ladder.StopHere, ladder.Conclude), and tells the shards whether the next
// step may start; a step with a missing or generator-invalid share is
// invalid (stats.CauseShardMissing, stats.CauseShardInvalid). Shards poll
// the coordinator's ladder state every PollEvery and stop offering at once
// when it aborts; a shard that cannot reach it for LostAfter stops on its
// own.
//
// The package never reads the configuration (internal/wiring builds what
// it needs) and owns no listener: the daemon mounts Handler on its admin
// server.
package fleet
