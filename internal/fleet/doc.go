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
// wall-clock start and the step rates) and offered by every shard, its
// share of step i through its own ladder.Runner (a ladder.Session), judged
// by its own abort rules, from step i's announced start while the
// coordinator allows it. Each shard serves its per-step results (counts
// and mergeable latency sketches, stats.ShardSummary) on its admin server
// (Handler, under /fleet/v1/). The coordinator gathers them once the step
// has ended, merges them (stats.Merge), judges the merged steps with the
// one ladder judge (ladder.AbortRules.Check, ladder.StopHere,
// ladder.Conclude), and tells the shards whether the next step may start
// and when: gap after every shard's results were in, and never later than
// the timetable every shard computes from the last start and its own
// configuration (start + step_duration + settle + gap, where it starts
// when a shard's results are missing). A step with a missing or
// generator-invalid share is
// invalid (cause.ShardMissing, cause.ShardInvalid). Shards poll
// the coordinator's ladder state every PollEvery and stop offering at once
// when it aborts; a shard that cannot reach it for LostAfter stops on its
// own.
//
// The package never reads the configuration (internal/wiring builds what
// it needs) and owns no listener: the daemon mounts Handler on its admin
// server.
package fleet
