package ladder

import (
	"testing"
	"time"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	z, err := time.LoadLocation(name)
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	return z
}

func TestNextEvery(t *testing.T) {
	base := time.Date(2026, 3, 8, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		now    time.Time
		every  time.Duration
		offset time.Duration
		want   time.Time
	}{
		{"mid interval", base.Add(17 * time.Minute), time.Hour, 5 * time.Minute, base.Add(time.Hour + 5*time.Minute)},
		{"before offset", base.Add(2 * time.Minute), time.Hour, 5 * time.Minute, base.Add(5 * time.Minute)},
		{"exactly on a run is strictly after", base.Add(5 * time.Minute), time.Hour, 5 * time.Minute, base.Add(time.Hour + 5*time.Minute)},
		{"15m no offset", base.Add(time.Nanosecond), 15 * time.Minute, 0, base.Add(15 * time.Minute)},
		{"odd interval", time.Unix(1000, 0).UTC(), 7 * time.Second, 3 * time.Second, time.Unix(1004, 0).UTC()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Next(tc.now, Schedule{Every: tc.every, Offset: tc.offset})
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tc.want) {
				t.Fatalf("Next(%s) = %s, want %s", tc.now, got, tc.want)
			}
		})
	}
}

func TestNextEveryIgnoresDST(t *testing.T) {
	// "every" is absolute time: across a DST change in the local zone the
	// gap between runs stays exactly the interval.
	ny := mustZone(t, "America/New_York")
	now := time.Date(2026, 3, 8, 1, 50, 0, 0, ny) // 10 minutes before the clocks jump
	a, err := Next(now, Schedule{Every: 30 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Next(a, Schedule{Every: 30 * time.Minute})
	if b.Sub(a) != 30*time.Minute || a.Sub(now) != 10*time.Minute {
		t.Fatalf("runs %s, %s after %s", a, b, now)
	}
}

func TestNextDailyDST(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	ny := mustZone(t, "America/New_York")
	cases := []struct {
		name  string
		now   time.Time
		daily string
		zone  *time.Location
		want  time.Time
	}{
		{"later today", time.Date(2026, 6, 1, 1, 0, 0, 0, berlin), "03:30", berlin, time.Date(2026, 6, 1, 3, 30, 0, 0, berlin)},
		{"tomorrow", time.Date(2026, 6, 1, 4, 0, 0, 0, berlin), "03:30", berlin, time.Date(2026, 6, 2, 3, 30, 0, 0, berlin)},
		{"at the time goes to tomorrow", time.Date(2026, 6, 1, 3, 30, 0, 0, berlin), "03:30", berlin, time.Date(2026, 6, 2, 3, 30, 0, 0, berlin)},
		// Spring forward in Berlin: 2026-03-29 02:00 → 03:00; 02:30 does not exist.
		{"spring gap runs at the normalised instant", time.Date(2026, 3, 29, 1, 0, 0, 0, berlin), "02:30", berlin,
			time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC)}, // = 03:30 CEST
		// Across the change the wall-clock time is kept (09:00 CEST = 07:00 UTC).
		{"across spring forward", time.Date(2026, 3, 28, 12, 0, 0, 0, berlin), "09:00", berlin, time.Date(2026, 3, 29, 7, 0, 0, 0, time.UTC)},
		// Fall back in New York: 2026-11-01 02:00 EDT → 01:00 EST; 01:30 happens twice.
		{"ambiguous time first occurrence", time.Date(2026, 11, 1, 0, 0, 0, 0, ny), "01:30", ny, time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)},
		{"ambiguous time runs once", time.Date(2026, 11, 1, 5, 31, 0, 0, time.UTC), "01:30", ny, time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC)},
		{"utc default", time.Date(2026, 1, 1, 23, 59, 0, 0, time.UTC), "00:00", nil, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Next(tc.now, Schedule{Daily: tc.daily, Zone: tc.zone})
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tc.want) {
				t.Fatalf("Next(%s) = %s, want %s", tc.now, got, tc.want.In(got.Location()))
			}
		})
	}
}

func TestNextErrors(t *testing.T) {
	for _, s := range []Schedule{
		{},
		{Every: time.Hour, Daily: "01:00"},
		{Every: time.Hour, Offset: time.Hour},
		{Daily: "1:00"},
		{Daily: "24:00"},
		{Daily: "ab:cd"},
	} {
		if _, err := Next(time.Now(), s); err == nil {
			t.Errorf("Next accepted %+v", s)
		}
	}
}

// TestTimetable: one ladder's length, three readings. 3 steps of 60s
// settling for at most 5m with 10s gaps: alone the windows and gaps and
// the last settle (3×70s + 5m = 8m30s); a fleet's step every 6m10s; a
// fleet ladder the lead and three periods (2s + 18m30s).
func TestTimetable(t *testing.T) {
	cfg := Config{Steps: []float64{1, 2, 4}, StepDuration: time.Minute, Settle: 5 * time.Minute, Gap: 10 * time.Second}
	tt := cfg.Timetable()
	if got := tt.Span(); got != 8*time.Minute+30*time.Second {
		t.Errorf("Span = %s, want 8m30s", got)
	}
	if got := tt.Period(); got != 6*time.Minute+10*time.Second {
		t.Errorf("Period = %s, want 6m10s", got)
	}
	if got := tt.FleetSpan(2 * time.Second); got != 18*time.Minute+32*time.Second {
		t.Errorf("FleetSpan = %s, want 18m32s", got)
	}
	if got := (Timetable{}).Span(); got != 0 {
		t.Errorf("an empty timetable spans %s", got)
	}
}
