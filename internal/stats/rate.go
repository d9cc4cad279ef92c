package stats

// PlannedRate is arrivals planned in the window (pending ones included) /
// window: the most goodput a step could have (goodput counts good arrivals
// planned in the same window); 0 without a window.
func (s Summary) PlannedRate() float64 {
	if secs := s.Window.Seconds(); secs > 0 {
		return float64(s.Planned+s.Pending) / secs
	}
	return 0
}
