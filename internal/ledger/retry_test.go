package ledger

import (
	"encoding/json"
	"testing"
	"time"
)

// A retry is planned joined to the attempt it repeats and to its arrival's
// first planned time, counts as an attempt, not demand, and carries both
// links through JSON (omitted on first attempts).
func TestRetryLinks(t *testing.T) {
	ms := time.Millisecond
	l := New(time.Now())
	first := l.Plan(Meta{Target: "t", Attempt: 1}, 10*ms)
	retry := l.Plan(Meta{Target: "t", Attempt: 2, RetryOf: first.ID, FirstPlanned: first.ArrivalPlanned()}, 90*ms)
	unnumbered := l.Plan(Meta{RetryOf: retry.ID, FirstPlanned: retry.ArrivalPlanned()}, 200*ms)
	if c := l.Counts(); c.Planned != 1 || c.Attempts != 3 {
		t.Errorf("planned %d attempts %d, want 1 and 3", c.Planned, c.Attempts)
	}
	for _, tc := range []struct {
		r              *Record
		retry          bool
		retryOf        uint64
		arrivalPlanned time.Duration
	}{
		{first, false, 0, 10 * ms},
		{retry, true, first.ID, 10 * ms},
		{unnumbered, true, retry.ID, 10 * ms},
	} {
		if tc.r.IsRetry() != tc.retry || tc.r.RetryOf != tc.retryOf || tc.r.ArrivalPlanned() != tc.arrivalPlanned {
			t.Errorf("record %d: retry %v of %d, arrival planned %v; want %v of %d, %v",
				tc.r.ID, tc.r.IsRetry(), tc.r.RetryOf, tc.r.ArrivalPlanned(), tc.retry, tc.retryOf, tc.arrivalPlanned)
		}
	}
	for _, tc := range []struct {
		r    *Record
		want map[string]any
	}{
		{first, map[string]any{}},
		{retry, map[string]any{"retry_of": float64(first.ID), "first_planned_ns": float64(10 * ms)}},
	} {
		b, err := json.Marshal(tc.r)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"retry_of", "first_planned_ns"} {
			if m[k] != tc.want[k] {
				t.Errorf("record %d: %s = %v, want %v", tc.r.ID, k, m[k], tc.want[k])
			}
		}
		var back Record
		if err := json.Unmarshal(b, &back); err != nil || back.RetryOf != tc.r.RetryOf || back.FirstPlanned != tc.r.FirstPlanned {
			t.Errorf("record %d did not round-trip: %+v (%v)", tc.r.ID, back, err)
		}
	}
}

// Arrival figures run from the first planned time; per-attempt ones from
// the attempt's own.
func TestArrivalFigures(t *testing.T) {
	ms := time.Millisecond
	r := Record{Attempt: 2, FirstPlanned: 10 * ms, Planned: 300 * ms, Dispatched: 301 * ms, FirstContent: 350 * ms, End: 400 * ms, Outcome: OK, Reason: ReasonStop}
	e2e, _ := r.E2E()
	ae2e, ok1 := r.ArrivalE2E()
	ttft, _ := r.TTFT()
	attft, ok2 := r.ArrivalTTFT()
	if !ok1 || !ok2 || e2e != 100*ms || ae2e != 390*ms || ttft != 50*ms || attft != 340*ms {
		t.Errorf("e2e %v arrival e2e %v, ttft %v arrival ttft %v", e2e, ae2e, ttft, attft)
	}
	first := Record{Planned: 10 * ms, Dispatched: 11 * ms, FirstContent: 20 * ms, End: 30 * ms}
	a, _ := first.ArrivalE2E()
	b, _ := first.E2E()
	if a != b || a != 20*ms {
		t.Errorf("first attempt: arrival e2e %v, e2e %v, want both 20ms", a, b)
	}
	if _, ok := (&Record{FirstPlanned: ms, Planned: 2 * ms}).ArrivalE2E(); ok {
		t.Error("arrival e2e defined for an unsent record")
	}
}

func TestAdmitted(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Record
		want bool
	}{
		{"unsent", Record{Outcome: Unsent, Reason: ReasonClientCap}, false},
		{"ok", Record{Dispatched: 1, Headers: 2, Outcome: OK, Reason: ReasonStop}, true},
		{"rejected 429", Record{Dispatched: 1, Headers: 2, Status: 429, Outcome: Rejected, Reason: ReasonStatus429}, false},
		{"server error 500", Record{Dispatched: 1, Headers: 2, Status: 500, Outcome: HTTPError, Reason: ReasonServerError}, true},
		{"connection refused", Record{Dispatched: 1, Outcome: TransportError, Reason: ReasonConnectionRefused}, false},
		{"reset before headers", Record{Dispatched: 1, Outcome: TransportError, Reason: ReasonConnectionReset}, false},
		{"tls", Record{Dispatched: 1, Outcome: TransportError, Reason: ReasonTLS}, false},
		{"reset mid-stream", Record{Dispatched: 1, Headers: 2, Outcome: TransportError, Reason: ReasonConnectionReset}, true},
		{"connect timeout", Record{Dispatched: 1, Outcome: Timeout, Reason: ReasonConnect}, false},
		{"headers timeout", Record{Dispatched: 1, Outcome: Timeout, Reason: ReasonHeaders}, true},
		{"idle timeout", Record{Dispatched: 1, Headers: 2, Outcome: Timeout, Reason: ReasonIdle}, true},
		{"stream error", Record{Dispatched: 1, Headers: 2, Outcome: StreamError, Reason: ReasonTruncated}, true},
		{"cancelled", Record{Dispatched: 1, Outcome: Cancelled, Reason: ReasonInjected}, true},
		{"censored", Record{Dispatched: 1, Outcome: Censored, Reason: ReasonDrainDeadline}, true},
	} {
		if got := tc.r.Admitted(); got != tc.want {
			t.Errorf("%s: admitted %v, want %v", tc.name, got, tc.want)
		}
	}
}
