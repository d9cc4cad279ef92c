package durfmt

import (
	"math"
	"strconv"
)

// Rate prints a rate (req/s) as every report, page, SVG and log line
// shows it, never in exponent form and never rounded away from what was
// asked: a configured step rate as it was written (1500, 12.5, 0.25: up
// to three decimals), a measured one to about three significant digits
// (1234.6 → 1235, 14.26 → 14.3, 2.345 → 2.35).
func Rate(r float64) string {
	a := math.Abs(r)
	switch {
	case math.IsNaN(r) || math.IsInf(r, 0) || a >= 1e12:
		return strconv.FormatFloat(r, 'g', 4, 64)
	case r == math.Round(r*1000)/1000:
		return strconv.FormatFloat(r, 'f', -1, 64)
	case a >= 100:
		return strconv.FormatFloat(r, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(r, 'f', 1, 64)
	case a >= 0.001:
		return strconv.FormatFloat(r, 'f', 3-int(math.Floor(math.Log10(a)))-1, 64)
	}
	return strconv.FormatFloat(r, 'g', 3, 64)
}
