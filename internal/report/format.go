package report

import (
	"fmt"
	"time"
)

// dur formats a duration for humans at a fixed, comparable precision.
func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < 0:
		return "-" + dur(-d)
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.3fs", d.Seconds())
	}
}

// pct formats a fraction as a percentage, or "n/a" when its denominator is 0.
func pct(f float64, den int) string {
	if den == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", f*100)
}

// rate formats a request rate.
func rate(r float64) string { return fmt.Sprintf("%.3f req/s", r) }
