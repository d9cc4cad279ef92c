// Package ladderresult is the one model of a finished ladder and its
// verdicts: the ladder runner produces a LadderResult, the fleet
// coordinator judges its merged steps into one, internal/report renders
// it, and its JSON (ladderjson.go, LadderSchemaVersion) is what the history
// file stores and `ladder --json` prints. Older flat history lines still
// decode (ladderlegacy.go). Capacity and knee (Judge, JudgeClass,
// JudgeLadder) use valid steps only, and say when a capacity is only a
// lower bound; a step cut by a deploy or a restart (Cut) makes the ladder
// partial. The JSON forms of a cohort's figures (DistJSON, GatesJSON,
// HostJSON) are shared with the probe report.
package ladderresult
