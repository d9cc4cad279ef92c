// Package durfmt prints a duration for people: the one format of every
// human report, page and log line (three significant figures). Machine
// outputs (JSON, metrics) carry seconds as numbers instead. Rates (Rate)
// and counts by name (Counts) are printed here too.
package durfmt

import (
	"math"
	"strconv"
	"time"
)

// Format prints a duration as every human report, page and log
// line shows it: three significant figures in the largest unit that keeps
// the figure at 1 or more (ns, µs, ms, s, then min and h past 1000 s), so
// 14.575143039s is "14.6s", 823.44ms is "823ms" and 999.7ms, which rounds
// to 1000ms, is "1s". Zero is "0s"; a negative duration keeps its sign.
// Machine outputs (JSON, metrics) carry seconds as numbers instead.
func Format(d time.Duration) string {
	if d < 0 {
		return "-" + Format(-d)
	}
	if d == 0 {
		return "0s"
	}
	units := []struct {
		name string
		size float64 // in nanoseconds
	}{
		{"h", float64(time.Hour)}, {"m", float64(time.Minute)},
		{"s", float64(time.Second)}, {"ms", float64(time.Millisecond)},
		{"µs", float64(time.Microsecond)}, {"ns", 1},
	}
	v := float64(d)
	for i, u := range units {
		// min and h only past 1000 s: "123s" reads better than "2.05m".
		if (u.name == "h" && v < 1000*float64(time.Minute)) || (u.name == "m" && v < 1000*float64(time.Second)) {
			continue
		}
		x := round3(v / u.size)
		if x >= 1 || i == len(units)-1 {
			return strconv.FormatFloat(x, 'f', -1, 64) + u.name
		}
	}
	return d.String() // not reached
}

// round3 rounds x (> 0) to three significant figures.
func round3(x float64) float64 {
	if x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	e := 2 - int(math.Floor(math.Log10(x)))
	if e >= 0 {
		m := math.Pow(10, float64(e))
		return math.Round(x*m) / m
	}
	m := math.Pow(10, float64(-e))
	return math.Round(x/m) * m
}
