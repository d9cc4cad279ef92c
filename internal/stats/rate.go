package stats

import "github.com/llmprobe/llmprobe/internal/durfmt"

// FormatRate prints a rate (req/s) as every report, page and log line
// shows it (durfmt.Rate, the one format): a configured step rate as it
// was written, a measured one to about three significant digits.
func FormatRate(r float64) string { return durfmt.Rate(r) }
