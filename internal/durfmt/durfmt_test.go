package durfmt

import (
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{14575143039 * time.Nanosecond, "14.6s"},
		{14711337323 * time.Nanosecond, "14.7s"},
		{time.Second, "1s"},
		{18500 * time.Millisecond, "18.5s"},
		{823440 * time.Microsecond, "823ms"},
		{999700 * time.Microsecond, "1s"},    // rounds up into the next unit
		{999400 * time.Microsecond, "999ms"}, // stays
		{45250 * time.Microsecond, "45.3ms"},
		{1500 * time.Microsecond, "1.5ms"},
		{1234 * time.Nanosecond, "1.23µs"},
		{500, "500ns"},
		{1, "1ns"},
		{123456 * time.Millisecond, "123s"},
		{999 * time.Second, "999s"},
		{1000 * time.Second, "16.7m"},
		{2 * time.Hour, "120m"},
		{20 * time.Hour, "20h"},
		{-1500 * time.Millisecond, "-1.5s"},
	} {
		if got := Format(c.d); got != c.want {
			t.Errorf("Format(%d) = %q, want %q", int64(c.d), got, c.want)
		}
	}
}
