package ledger

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestPhaseDuration: each phase from its stamps, absent where its
// connection did not have it (a reused one: no resolve, connect or tls)
// or a stamp is missing or out of order.
func TestPhaseDuration(t *testing.T) {
	ms := time.Millisecond
	fresh := Record{Dispatched: 1 * ms, Headers: 20 * ms, FirstByte: 21 * ms, FirstContent: 30 * ms,
		Conn: &Conn{DNS: ms, Connect: 2 * ms, TLS: 3 * ms, Got: 8 * ms, Wrote: 9 * ms}}
	reused := Record{Dispatched: 1 * ms, Headers: 20 * ms, FirstByte: 21 * ms, FirstContent: 30 * ms,
		Conn: &Conn{Reused: true, Got: 2 * ms, Wrote: 3 * ms}}
	early := Record{Dispatched: 1 * ms, Headers: 5 * ms, Conn: &Conn{Got: 2 * ms}} // a response before the request's end
	for _, tc := range []struct {
		name string
		rec  Record
		want map[Phase]time.Duration // absent: no phase
	}{
		{"new connection", fresh, map[Phase]time.Duration{PhaseResolve: ms, PhaseConnect: 2 * ms, PhaseTLS: 3 * ms,
			PhaseWrite: ms, PhaseProcessing: 11 * ms, PhaseFirstByte: ms, PhaseFirstContent: 9 * ms}},
		{"reused connection", reused, map[Phase]time.Duration{PhaseWrite: ms, PhaseProcessing: 17 * ms, PhaseFirstByte: ms, PhaseFirstContent: 9 * ms}},
		{"early response", early, map[Phase]time.Duration{}},
		{"no connection", Record{Headers: 5 * ms}, map[Phase]time.Duration{}},
	} {
		for _, p := range Phases {
			d, ok := tc.rec.PhaseDuration(p)
			want, wantOK := tc.want[p]
			if ok != wantOK || d != want {
				t.Errorf("%s: phase %s = %v (%v), want %v (%v)", tc.name, p, d, ok, want, wantOK)
			}
		}
	}
	b, _ := json.Marshal(reused.Conn)
	if got := string(b); !strings.Contains(got, `"reused":true`) || strings.Contains(got, "dns_ns") || strings.Contains(got, "connect_ns") {
		t.Errorf("a reused connection written as %s: want reused and no dial phase", got)
	}
}
