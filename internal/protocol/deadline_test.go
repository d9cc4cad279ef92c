package protocol

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestTimeoutCause: a caller's deadline with a TimeoutCause ends the
// request timeout with the cause's reason, before headers and mid-stream;
// a plain deadline stays a cancellation.
func TestTimeoutCause(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const long = 10 * time.Second
	tests := []struct {
		name    string
		steps   []step
		cause   error
		want    ledger.Outcome
		reason  ledger.Reason
		content bool // first content arrived before the deadline
	}{
		{"before headers", nil, TimeoutCause(ledger.ReasonTotal, 150*time.Millisecond), ledger.Timeout, ledger.ReasonTotal, false},
		{"mid-stream", []step{content("a"), {wait: long, raw: chunk(`{"content":"b"}`)}},
			TimeoutCause(ledger.ReasonTotal, 150*time.Millisecond), ledger.Timeout, ledger.ReasonTotal, true},
		{"plain deadline", []step{content("a"), {wait: long, raw: chunk(`{"content":"b"}`)}}, nil, ledger.Cancelled, ledger.ReasonInterrupted, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := streamHandler(tt.steps...)
			if tt.steps == nil { // no response headers at all
				h = func(_ http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body) // so the server sees the client go
					sleep(r, long)
				}
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			c := newClient(t, ClientOptions{})
			ctx, cancel := context.WithDeadlineCause(context.Background(), time.Now().Add(150*time.Millisecond), tt.cause)
			defer cancel()
			start := time.Now()
			res, rec := probe(t, c, ctx, srv.URL, Params{})
			if res.Outcome != tt.want || res.Reason != tt.reason {
				t.Fatalf("result %+v, want %s/%s", res, tt.want, tt.reason)
			}
			if tt.want == ledger.Timeout && !strings.Contains(res.Err, "150ms") {
				t.Errorf("error %q does not name the limit", res.Err)
			}
			if (rec.FirstContent != 0) != tt.content {
				t.Errorf("first content %v, want reached %v", rec.FirstContent, tt.content)
			}
			if el := time.Since(start); el > long/2 {
				t.Errorf("took %v: the deadline did not end the request", el)
			}
		})
	}
}
