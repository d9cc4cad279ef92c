package proxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// dyingUpstream streams three events and then drops the connection, as an
// engine that crashes mid-generation.
func dyingUpstream(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"t`+strconv.Itoa(i)+` "},"finish_reason":null}]}`+"\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset, as a process that died
			}
			_ = conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// slowUpstream answers only after 1.5 s (its headers too), as an engine
// whose queue is full.
func slowUpstream(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(1500 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(freePort(t))
}

// TestUpstreamFailsBehindNginx: an upstream that is down is the proxy's
// 502, one that does not answer in proxy_read_timeout its 504, both
// http_error/gateway with the status and the proxy named; one that dies
// mid-stream, or is silent after its headers for longer than
// proxy_read_timeout, ends the stream as a reset or truncation, status 200.
func TestUpstreamFailsBehindNginx(t *testing.T) {
	requireNginx(t)
	tests := []struct {
		name     string
		upstream func(t *testing.T) string
		timeout  time.Duration
		status   int
		reasons  []ledger.Reason
	}{
		{"upstream down", closedPort, 0, 502, []ledger.Reason{ledger.ReasonGateway}},
		{"upstream headers later than proxy_read_timeout", slowUpstream, 500 * time.Millisecond, 504, []ledger.Reason{ledger.ReasonGateway}},
		// The simulator sends its headers at once and its first token
		// after the prefill: a prefill longer than proxy_read_timeout cuts
		// the stream after its headers.
		{"first token later than proxy_read_timeout", func(t *testing.T) string { return startSim(t, 2*time.Second) }, 500 * time.Millisecond,
			200, []ledger.Reason{ledger.ReasonConnectionReset, ledger.ReasonTruncated}},
		{"upstream dies mid-stream", dyingUpstream, 0, 200, []ledger.Reason{ledger.ReasonConnectionReset, ledger.ReasonTruncated}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := startNginx(t, proxyConfig{Upstream: tt.upstream(t), ReadTimeout: tt.timeout})
			for _, h1 := range []bool{true, false} {
				recs := run(t, client(t, n.cfg.CAFile, h1), n.TLSURL(), 2, 100*time.Millisecond, nil)
				for _, r := range recs {
					t.Logf("HTTP/2 %v: %s/%s status %d: %q", !h1, r.Outcome, r.Reason, r.Status, r.Error)
					if r.Status != tt.status || !containsReason(tt.reasons, r.Reason) {
						t.Errorf("HTTP/2 %v: %s/%s status %d (%q), want status %d and a reason of %v", !h1, r.Outcome, r.Reason, r.Status, r.Error, tt.status, tt.reasons)
					}
					if tt.status != 200 && !strings.Contains(r.Error, "Server: nginx") {
						t.Errorf("error text %q does not name the proxy", r.Error)
					}
				}
			}
		})
	}
}

func containsReason(rs []ledger.Reason, r ledger.Reason) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}
