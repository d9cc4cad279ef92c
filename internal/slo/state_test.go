package slo

import "testing"

// TestAvailability: what the availability SLI counts, pair by pair.
func TestAvailability(t *testing.T) {
	for _, c := range []struct {
		outcome, reason string
		event, failed   bool
	}{
		{"ok", "stop", true, false},
		{"rejected", "status_429", true, true},
		{"http_error", "server_error", true, true},
		{"timeout", "first_content", true, true},
		{"transport_error", "connection_refused", true, true},
		{"transport_error", "stale_connection", false, false},
		{"stream_error", "truncated", true, true},
		{"stream_error", "buffer_limit", false, false},
		{"unsent", "budget", false, false},
		{"unsent", "client_cap", false, false},
		{"cancelled", "injected", false, false},
		{"censored", "drain_deadline", false, false},
		{"mystery", "x", true, true},
	} {
		e, f := Availability(c.outcome, c.reason)
		if e != c.event || f != c.failed {
			t.Errorf("%s/%s: event %v failed %v, want %v %v", c.outcome, c.reason, e, f, c.event, c.failed)
		}
	}
}

// TestJudge: each state from the windows the page tier reads.
func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name        string
		short, long Counts
		want        State
	}{
		{"nothing sent", Counts{}, Counts{}, StateNoData},
		{"healthy", Counts{Sent: 300, LatencyEvents: 300}, Counts{Sent: 3600, Failed: 2, LatencyEvents: 3598, LatencyBad: 5}, StateOK},
		{"slow but successful", Counts{Sent: 300, LatencyEvents: 300, LatencyBad: 300}, Counts{Sent: 3600, LatencyEvents: 3600, LatencyBad: 3600}, StateSlow},
		{"failing a third", Counts{Sent: 300, Failed: 100, LatencyEvents: 200}, Counts{Sent: 3600, Failed: 1200, LatencyEvents: 2400}, StateFailing},
		{"failing and slow: failing wins", Counts{Sent: 300, Failed: 100, LatencyEvents: 200, LatencyBad: 200}, Counts{Sent: 3600, Failed: 1200, LatencyEvents: 2400, LatencyBad: 2400}, StateFailing},
		{"everything fails", Counts{Sent: 10, Failed: 10}, Counts{Sent: 100, Failed: 10}, StateDown},
		{"two failures only: the guard", Counts{Sent: 2, Failed: 2}, Counts{Sent: 2, Failed: 2}, StateOK},
		{"old failures only: the short window recovered", Counts{Sent: 300}, Counts{Sent: 3600, Failed: 900}, StateOK},
	} {
		if got := Judge(c.short, c.long); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if !StateDown.Worse(StateFailing) || !StateFailing.Worse(StateSlow) || !StateSlow.Worse(StateOK) || !StateOK.Worse(StateNoData) {
		t.Error("state order: want DOWN > FAILING > SLOW > OK > NO DATA")
	}
}
