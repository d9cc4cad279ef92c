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
