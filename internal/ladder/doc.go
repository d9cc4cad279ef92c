// Package ladder runs rate ladders and judges them. A ladder offers a target
// a series of increasing open-loop rates (steps) through internal/dispatch,
// summarises each step's cohort with internal/stats, evaluates abort rules
// inside and after every step, stops climbing where Config.StopAt says
// (never more than one step past the first step that failed its gates),
// and reports the capacity (the highest step rate that was
// valid and met its gates with a good fraction at or above a target) and the
// knee (the first step whose TTFT p95 exceeds k × the lowest step's). Results
// are appended to a JSONL history.
//
// The package never talks HTTP: the caller gives it an Exec. Next computes
// when a scheduled ladder runs next, as a pure function of (now, spec).
package ladder
