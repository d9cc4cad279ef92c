// Package ladder runs rate ladders and judges them. A ladder offers a target
// a series of increasing open-loop rates (steps) through internal/dispatch,
// summarises each step's cohort with internal/stats, evaluates abort rules
// inside and after every step, stops climbing where Config.StopAt says
// (never more than one step past the first step that failed its gates),
// and reports the capacity (the highest step rate that was
// valid and met its gates with a good fraction at or above a target; a lower
// bound unless a valid step above it failed) and the knee (the first valid
// step whose TTFT p95 exceeds k × the lowest valid step's), for all classes
// together and for each class on its own records and gates. An invalid step
// is recorded with its causes and never used; it aborts the ladder only
// under AbortRules.OnGeneratorInvalid. Results are appended to a JSONL
// history.
//
// The package never talks HTTP and never reads the configuration: the
// caller gives it an Exec (and, optionally, a ServerMetrics that reads the
// target's own metrics endpoint over each step: the view goes into the
// step, and a failure to read it never fails the step), and
// internal/wiring builds its Config from a configured target. Next computes
// when a scheduled ladder runs next, as a pure function of (now, spec).
package ladder
