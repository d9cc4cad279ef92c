package report

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/durfmt"
)

// dur formats a duration for humans: durfmt.Format, the one
// duration format of every text, HTML and SVG report and log line.
func dur(d time.Duration) string { return durfmt.Format(d) }

// pct formats a fraction as a percentage, or "n/a" when its denominator is 0.
func pct(f float64, den int) string {
	if den == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", f*100)
}

// rate formats a request rate.
func rate(r float64) string { return fmt.Sprintf("%.3f req/s", r) }
