package testutil

import (
	"testing"

	"github.com/llmprobe/llmprobe/internal/sim"
)

// NewSim builds a simulator that is closed when the test ends, for tests
// that serve its Handler behind their own.
func NewSim(t testing.TB, cfg sim.Config) *sim.Server {
	t.Helper()
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatalf("sim.New: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// StartSim serves a simulator on 127.0.0.1 (a free port) until the test
// ends and returns its API base URL (ending in /v1).
func StartSim(t testing.TB, cfg sim.Config) string {
	t.Helper()
	_, u := ServeSim(t, cfg)
	return u
}

// ServeSim is StartSim that also returns the server, for tests that read
// its live state (Stats). Stopping it at the end of the test must succeed.
func ServeSim(t testing.TB, cfg sim.Config) (*sim.Server, string) {
	t.Helper()
	s := NewSim(t, cfg)
	u, closeFn, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("sim start: %v", err)
	}
	t.Cleanup(func() {
		if err := closeFn(); err != nil {
			t.Errorf("sim close: %v", err)
		}
	})
	return s, u
}
