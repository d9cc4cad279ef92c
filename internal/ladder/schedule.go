package ladder

import (
	"errors"
	"fmt"
	"time"
)

// Schedule says when a ladder runs: every Every, shifted by Offset from the
// Unix epoch (so "every 1h, offset 5m" runs at :05 past each hour UTC), or
// daily at Daily ("HH:MM") in Zone. Exactly one of Every and Daily is set.
type Schedule struct {
	Every  time.Duration
	Offset time.Duration
	Daily  string
	Zone   *time.Location // for Daily; nil = UTC
}

// Next returns the first run time strictly after now. For a daily time that
// does not exist on a day (a spring-forward gap) the run happens at the
// normalised instant (e.g. 02:30 becomes 03:30); a time that happens twice
// (fall back) runs once, at its first occurrence.
func Next(now time.Time, s Schedule) (time.Time, error) {
	switch {
	case s.Every > 0 && s.Daily != "":
		return time.Time{}, errors.New("ladder schedule: set every or daily, not both")
	case s.Every > 0:
		if s.Offset < 0 || s.Offset >= s.Every {
			return time.Time{}, fmt.Errorf("ladder schedule: offset %s must be in [0, every %s)", s.Offset, s.Every)
		}
		// Work in whole intervals since the epoch; time.Time arithmetic
		// keeps this exact at nanosecond resolution.
		base := time.Unix(0, 0).Add(s.Offset)
		k := now.Sub(base) / s.Every
		if now.Before(base) {
			k--
		}
		t := base.Add(k * s.Every)
		for !t.After(now) {
			t = t.Add(s.Every)
		}
		return t.In(now.Location()), nil
	case s.Daily != "":
		var hh, mm int
		if n, err := fmt.Sscanf(s.Daily, "%d:%d", &hh, &mm); err != nil || n != 2 || hh < 0 || hh > 23 || mm < 0 || mm > 59 || len(s.Daily) != 5 {
			return time.Time{}, fmt.Errorf("ladder schedule: daily %q: want HH:MM", s.Daily)
		}
		loc := s.Zone
		if loc == nil {
			loc = time.UTC
		}
		lt := now.In(loc)
		for d := 0; d < 3; d++ {
			t := time.Date(lt.Year(), lt.Month(), lt.Day()+d, hh, mm, 0, 0, loc)
			if t.After(now) {
				return t, nil
			}
		}
		return time.Time{}, fmt.Errorf("ladder schedule: no daily run found after %s", now)
	default:
		return time.Time{}, errors.New("ladder schedule: neither every nor daily is set")
	}
}

// Timetable is a ladder's length: Steps steps, each an arrival window of
// Step whose requests settle for at most Settle (the target's
// timeouts.total), then Gap before the next. It is the one rule for how
// long a ladder takes: the configuration's schedule checks (Span,
// FleetSpan) and a fleet's step period read it.
type Timetable struct {
	Steps             int
	Step, Settle, Gap time.Duration
}

// Timetable is the ladder's timetable.
func (c Config) Timetable() Timetable {
	return Timetable{Steps: len(c.Steps), Step: c.StepDuration, Settle: c.Settle, Gap: c.Gap}
}

// Period is one step's slot on a fleet's fixed timetable: its window, its
// settle and the gap; step i+1 starts a Period after step i.
func (t Timetable) Period() time.Duration { return t.Step + t.Settle + t.Gap }

// Span is the least a ladder alone takes: every window and every gap, and
// the settle of the last step's requests (a step alone goes on as soon as
// its requests end, usually well before Settle).
func (t Timetable) Span() time.Duration {
	return time.Duration(t.Steps)*(t.Step+t.Gap) + t.Settle
}

// FleetSpan is a fleet ladder's length on its fixed timetable: the lead
// from its announcement to its first step, then a Period per step.
func (t Timetable) FleetSpan(lead time.Duration) time.Duration {
	return lead + time.Duration(t.Steps)*t.Period()
}
