package daemon

import (
	"slices"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/ladder"
)

// ladderPhase spreads the timed ladders that share one timetable over its
// period, so that they do not all fall due at its instants and then wait
// in the queue (limits.max_concurrent_ladders) one behind the other. The
// targets whose ladder runs every the same interval at the same offset
// (a daily timetable is left alone: its time of day is the point) are
// taken in name order, limit at a time: with n of them and limit L, the
// k-th is due (k div L) × every / ⌈n / L⌉ after each instant. With at most
// L of them, or none of the kind, the phase is 0: the timetable as
// written. The k-th ladder is thus never due earlier than the queue would
// have started it, unless the ladders are shorter than their share of the
// period, which is what the spread is for.
func ladderPhase(cfg *config.Config, name string, s ladder.Schedule) time.Duration {
	if s.Every <= 0 || s.Daily != "" {
		return 0
	}
	var names []string
	for _, t := range cfg.Targets {
		ts := t.Ladder.Schedule
		if t.Ladder.Enabled && ts.Daily == "" && ts.Every.D() == s.Every && ts.Offset.D() == s.Offset {
			names = append(names, t.Name)
		}
	}
	limit := max(cfg.Limits.MaxConcurrentLadders, 1)
	slices.Sort(names)
	k := slices.Index(names, name)
	if k < 0 || len(names) <= limit {
		return 0
	}
	slots := (len(names) + limit - 1) / limit
	return time.Duration(k/limit) * (s.Every / time.Duration(slots))
}

// nextTimed is when the target's next timed ladder is due, strictly after
// now: its timetable's next instant shifted by its phase (ladderPhase).
func (r *targetRun) nextTimed(now time.Time) (time.Time, error) {
	next, err := ladder.Next(now.Add(-r.ladderPhase), r.sched)
	if err != nil {
		return time.Time{}, err
	}
	return next.Add(r.ladderPhase), nil
}
