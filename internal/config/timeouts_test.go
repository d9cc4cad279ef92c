package config

import (
	"strings"
	"testing"
	"time"
)

// TestUnsetPhasesFitTheTotal: with timeouts.total written, a phase left
// out takes its default clamped to the total (headers also to a written
// first_content); a phase written longer than the total stays an error.
func TestUnsetPhasesFitTheTotal(t *testing.T) {
	s := func(d string) Duration { v, _ := time.ParseDuration(d); return Duration(v) }
	cases := []struct {
		name, timeouts string
		want           Timeouts
		err            string
		notErr         string // a second error the first one already explains
	}{
		{"total alone", "{total: 10s}", Timeouts{Connect: s("5s"), Headers: s("10s"), FirstContent: s("10s"), Idle: s("10s"), Total: s("10s")}, "", ""},
		{"total and first content", "{total: 10s, first_content: 3s}", Timeouts{Connect: s("5s"), Headers: s("3s"), FirstContent: s("3s"), Idle: s("10s"), Total: s("10s")}, "", ""},
		{"no total: defaults", "{idle: 20s}", Timeouts{Connect: s("5s"), Headers: s("30s"), FirstContent: s("1m"), Idle: s("20s"), Total: s("5m")}, "", ""},
		{"a written phase over the total", "{total: 10s, headers: 20s}", Timeouts{}, "targets[0].timeouts.headers: 20s is longer than timeouts.total 10s", "first_content"},
		{"a written first content under a written headers over the total", "{total: 10s, headers: 20s, first_content: 5s}", Timeouts{},
			"targets[0].timeouts.first_content: 5s is shorter than timeouts.headers 20s", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadWith(Options{Path: write(t, minimal+"    timeouts: "+tc.timeouts+"\n"), Environ: noEnv})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("want %q, got %v", tc.err, err)
				}
				if tc.notErr != "" && strings.Contains(err.Error(), tc.notErr) {
					t.Errorf("want no %s error beside %q, got %v", tc.notErr, tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Targets[0].Timeouts; got != tc.want {
				t.Errorf("timeouts %+v, want %+v", got, tc.want)
			}
		})
	}
}
