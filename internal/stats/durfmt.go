package stats

import (
	"time"

	"github.com/llmprobe/llmprobe/internal/durfmt"
)

// FormatDuration prints a duration as every human report, page and log
// line shows it (durfmt.Format): three significant figures in the largest
// unit that keeps the figure at 1 or more, so 14.575143039s is "14.6s".
func FormatDuration(d time.Duration) string { return durfmt.Format(d) }
