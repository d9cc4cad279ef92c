package chaos

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// want is one terminal outcome and reason.
type want struct {
	outcome ledger.Outcome
	reason  ledger.Reason
}

func (w want) String() string { return string(w.outcome) + "/" + string(w.reason) }

func w(o ledger.Outcome, r ledger.Reason) want { return want{o, r} }

// serverKind is what a case's target is.
type serverKind int

const (
	plainServer  serverKind = iota // the hostile HTTP/1.1 server
	refusedPort                    // nothing listening
	tlsUntrusted                   // TLS with a certificate the client does not trust
	h2Server                       // HTTP/2 over TLS, trusted (the case's h2 handler)
)

// timeouts are a target's timeouts.
type timeouts struct{ connect, headers, firstContent, idle, total time.Duration }

// defaultTimeouts are generous: an outcome that is not a timeout must not
// turn into one on a loaded machine (the race detector, parallel cases,
// other work), though a healthy stream takes milliseconds. A case whose
// outcome is a timeout tightens that one (see timeouts).
var defaultTimeouts = timeouts{connect: 5 * time.Second, headers: 5 * time.Second,
	firstContent: 6 * time.Second, idle: 5 * time.Second, total: 8 * time.Second}

// The timeouts a case that expects one tightens.
const (
	tightHeaders      = 2 * time.Second
	tightIdle         = 2 * time.Second
	tightFirstContent = 3 * time.Second
	tightTotal        = 4 * time.Second
)

// chaosCase is one row of the case table: a hostile behaviour and what
// llmprobe must make of it.
type chaosCase struct {
	name   string
	covers string // the item of issue 8's list it covers ("" = an addition)
	what   string // what the server does
	api    string // "" = openai-chat
	kind   serverKind
	serve  behaviour        // plainServer
	h2     http.HandlerFunc // h2Server
	// want lists the terminal outcomes every request may end with; the
	// first must be seen at least once (every one of them with all).
	want []want
	all  bool
	to   *timeouts // nil = defaultTimeouts (heavyTimeouts when heavy)
	// heavy marks a case whose server sends megabytes per request: it runs
	// at a lower rate, with timeouts long enough that a slow machine (or the
	// race detector) still reaches the outcome the case is about.
	heavy bool
	// slow runs the case at 1 request a second (with its usual timeouts):
	// its server keeps a CPU busy per request for as long as the request
	// lasts.
	slow bool
	// budget, when set, gives the daemon's target a daily token budget.
	budget int
	// identity says the case is about the identity poll (GET /models): the
	// long-running daemon reloads at the start of its phase to poll again.
	identity bool
	// defect is the numbered defect of issue 8 the case proves fixed (0 =
	// none in particular).
	defect int
	// probeArgs are extra flags of the probe; daemonTarget extra YAML lines
	// of the daemon's target (indented under it) and daemonGlobal extra
	// top-level YAML.
	probeArgs                  []string
	daemonTarget, daemonGlobal string
	// probeOnly cases are about the probe command alone (closed loop,
	// signals); the daemon does not run them.
	probeOnly bool
	// hupProbe sends the probe a SIGHUP while its arrivals are still due.
	hupProbe bool
	// noPhase keeps the case out of the long-running daemon's phases (a
	// budget it spends stays spent for the day).
	noPhase bool
	// setup, when set, starts what the case needs besides its server.
	setup func(t testing.TB)
	// check, when set, asserts more about a finished run; also says what,
	// for the docs.
	check func(t *testing.T, r *caseRun)
	also  string
}

// heavyTimeouts are the timeouts of a heavy case: what it is about is
// memory and parsing, not a timeout. Its server writes megabytes per
// request, and its client parses them; under the race detector on a busy
// host (other tests, other builds) that alone has taken more than 10 s, so
// these leave room for several times that before an outcome the case does
// not expect could turn into a timeout. A heavy case that expects a timeout
// tightens it to heavyTight (see timeouts).
var heavyTimeouts = timeouts{connect: 5 * time.Second, headers: 30 * time.Second,
	firstContent: 40 * time.Second, idle: 30 * time.Second, total: 45 * time.Second}

// tightened are the values a case that expects a timeout tightens it to.
type tightened struct{ headers, idle, firstContent, total time.Duration }

var (
	tight      = tightened{headers: tightHeaders, idle: tightIdle, firstContent: tightFirstContent, total: tightTotal}
	heavyTight = tightened{headers: 8 * time.Second, idle: 8 * time.Second, firstContent: 10 * time.Second, total: 12 * time.Second}
)

// timeouts are the case's: its own, or the generous defaults (the heavy
// ones when heavy) with each timeout the case expects tightened (keeping
// the config's rules: first content ≥ headers, every one ≤ total).
func (c *chaosCase) timeouts() timeouts {
	if c.to != nil {
		return *c.to
	}
	to, tt := defaultTimeouts, tight
	if c.heavy {
		to, tt = heavyTimeouts, heavyTight
	}
	for _, w := range c.want {
		if w.outcome != ledger.Timeout {
			continue
		}
		switch w.reason {
		case ledger.ReasonHeaders:
			to.headers = tt.headers
		case ledger.ReasonIdle:
			to.idle = tt.idle
		case ledger.ReasonFirstContent:
			to.headers, to.firstContent = min(to.headers, tt.firstContent), tt.firstContent
		case ledger.ReasonTotal:
			to = timeouts{connect: min(to.connect, tt.total), headers: min(to.headers, tt.total),
				firstContent: min(to.firstContent, tt.total), idle: min(to.idle, tt.total), total: tt.total}
		}
	}
	return to
}

// drain is the probe's and the daemon's drain timeout for the case: longer
// than its total timeout, so that no request still in flight at the end of
// the window is censored instead of ending with its own outcome.
func (c *chaosCase) drain() time.Duration {
	return max(drainTimeout, c.timeouts().total+2*time.Second)
}

// ownConfig reports whether the case needs the daemon's target configured
// its own way: timeouts, rate, a budget or extra keys.
func (c *chaosCase) ownConfig() bool {
	return c.timeouts() != defaultTimeouts || c.daemonRate() != (&chaosCase{}).daemonRate() || c.budget > 0 ||
		c.daemonTarget != "" || c.daemonGlobal != ""
}

// rate is the case's arrival rate (req/s) for the probe (over its short
// window: one request for a heavy or slow case).
func (c *chaosCase) rate() float64 {
	if c.heavy || c.slow {
		return 1
	}
	return 5
}

// daemonRate is the case's arrival rate (req/s) for the daemon, which runs
// until several requests finished: a heavy case's one every 4 s, since
// under -race on a busy host one of its requests has cost more than a
// second of CPU, and at 1 req/s they piled up until each took its 40 s
// first-content timeout.
func (c *chaosCase) daemonRate() float64 {
	if c.heavy {
		return 0.25
	}
	return c.rate()
}

func (c *chaosCase) apiName() string {
	if c.api == "" {
		return "openai-chat"
	}
	return c.api
}

// Sizes of the big hostile payloads.
const (
	tenMB   = 10 << 20
	fiftyMB = 50 << 20
)

// cases returns the case table, with fresh state for each call.
func cases() []*chaosCase {
	filler := strings.Repeat("x", 64<<10)
	var otherOrigin atomic.Pointer[counter]
	var h2Requests, h1Requests atomic.Int64

	return []*chaosCase{
		{name: "healthy", what: "a well-formed stream (the control case)", serve: healthy, want: []want{w(ledger.OK, ledger.ReasonStop)}},

		// ----- connection level -----
		{name: "refused", covers: "refused", what: "nothing listens on the port", kind: refusedPort,
			want: []want{w(ledger.TransportError, ledger.ReasonConnectionRefused)}},
		{name: "accept_never_answer", covers: "accept-and-never-answer", what: "accepts the connection, reads the request, never answers",
			serve: func(h *hconn) bool { return h.hold() }, want: []want{w(ledger.Timeout, ledger.ReasonHeaders)}},
		{name: "close_before_headers", what: "reads the request and closes the connection (FIN) without a byte",
			serve: func(h *hconn) bool { return false }, want: []want{w(ledger.TransportError, ledger.ReasonConnectionReset)}},
		{name: "rst_before_headers", what: "reads the request and resets the connection (RST)",
			serve: func(h *hconn) bool { return h.reset() }, want: []want{w(ledger.TransportError, ledger.ReasonConnectionReset)}},
		{name: "not_http", what: "answers with an SSH banner instead of HTTP",
			serve: func(h *hconn) bool { h.raw("SSH-2.0-OpenSSH_9.6\r\n"); return h.hold() },
			want:  []want{w(ledger.TransportError, ledger.ReasonTransportOther)}},
		{name: "tls_untrusted", covers: "TLS untrusted certificate", what: "HTTPS with a self-signed certificate the client does not trust",
			kind: tlsUntrusted, want: []want{w(ledger.TransportError, ledger.ReasonTLSUntrusted)}},
		{name: "h2_rst_stream", covers: "HTTP/2 RST_STREAM", what: "HTTP/2 over TLS: two content events, then RST_STREAM (INTERNAL_ERROR)",
			kind: h2Server, h2: func(rw http.ResponseWriter, r *http.Request) {
				if r.ProtoMajor == 2 {
					h2Requests.Add(1)
				} else {
					h1Requests.Add(1)
				}
				if r.Method == http.MethodGet {
					rw.Header().Set("Content-Type", "application/json")
					_, _ = rw.Write([]byte(`{"object":"list","data":[{"id":"chaos-model","root":"r"}]}`))
					return
				}
				rw.Header().Set("Content-Type", "text/event-stream")
				rw.WriteHeader(200)
				for range 2 {
					_, _ = rw.Write([]byte("data: " + chatChunk("c", "chaos-model", `{"content":"word "}`, "null") + "\n\n"))
					rw.(http.Flusher).Flush()
					time.Sleep(5 * time.Millisecond)
				}
				panic(http.ErrAbortHandler) // HTTP/2: RST_STREAM
			},
			want: []want{w(ledger.TransportError, ledger.ReasonConnectionReset)}, also: "the requests were HTTP/2",
			check: func(t *testing.T, r *caseRun) {
				if h2Requests.Load() == 0 || h1Requests.Load() > 0 {
					t.Errorf("the client did not speak HTTP/2: %d HTTP/2 and %d HTTP/1 requests", h2Requests.Load(), h1Requests.Load())
				}
			}},
		{name: "close_idle_after_response", defect: 8, covers: "server closing idle keep-alive connections",
			what:  "closes every connection right after its response (no Connection: close)",
			serve: func(h *hconn) bool { serveStream(h, stream{}); return false },
			want:  []want{w(ledger.OK, ledger.ReasonStop)}},
		{name: "close_on_reuse", defect: 8, covers: "server closing idle keep-alive connections",
			what: "answers the first request of a connection, closes it when a second one arrives on it",
			serve: func(h *hconn) bool {
				if h.n > 1 && !h.models() {
					return false
				}
				return serveStream(h, stream{})
			},
			// Issue 18: the request that meets the close is replayed on a
			// new connection (its record counts the replay), so all end ok.
			want: []want{w(ledger.OK, ledger.ReasonStop)}},

		// ----- status line and headers -----
		{name: "status_101", covers: "status 101", what: "101 Switching Protocols to a request that asked for no upgrade, then silence",
			serve: func(h *hconn) bool {
				h.head(101, "Switching Protocols", "Upgrade: chaos", "Connection: Upgrade")
				return h.hold()
			}, want: []want{w(ledger.HTTPError, ledger.ReasonUnexpectedStatus)}},
		{name: "status_999", covers: "status 999", what: "status 999 with an empty body",
			serve: func(h *hconn) bool { return h.full(999, "Chaos", "text/plain", "") },
			want:  []want{w(ledger.HTTPError, ledger.ReasonUnexpectedStatus)}},
		{name: "redirect_loop", covers: "redirect loop", what: "302 to the same URL, for ever",
			serve: func(h *hconn) bool { return h.full(302, "Found", "text/plain", "", "Location: "+h.req.URL.Path) },
			want:  []want{w(ledger.HTTPError, ledger.ReasonUnexpectedStatus)}},
		{name: "redirect_other_origin", covers: "redirect to another origin", what: "307 to another origin (which must never be asked, nor see the key)",
			setup: func(t testing.TB) { otherOrigin.Store(newCounter(t)) },
			serve: func(h *hconn) bool {
				return h.full(307, "Temporary Redirect", "text/plain", "", "Location: http://"+otherOrigin.Load().addr+h.req.URL.Path)
			},
			want: []want{w(ledger.HTTPError, ledger.ReasonUnexpectedStatus)}, also: "the other origin is never asked",
			check: func(t *testing.T, r *caseRun) {
				if n := otherOrigin.Load().hits.Load(); n > 0 {
					t.Errorf("the other origin got %d requests (%d with a key): a redirect was followed", n, otherOrigin.Load().keys.Load())
				}
			}},
		{name: "infinite_headers", heavy: true, covers: "infinite headers", what: "a 200 status line, then 8 KiB header lines for ever",
			serve: func(h *hconn) bool {
				h.raw("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n")
				line := strings.Repeat("h", 8<<10)
				for i := 0; h.raw(fmt.Sprintf("X-Chaos-%d: %s\r\n", i, line)); i++ {
				}
				return false
			}, want: []want{w(ledger.TransportError, ledger.ReasonTransportOther)}},
		{name: "headers_9mb_then_silence", what: "a 200 status line and 9 MB of header lines (under Go's 10 MB limit, over llmprobe's 256 KiB), then silence, on every request",
			serve: func(h *hconn) bool {
				h.raw("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n")
				line := strings.Repeat("h", 8<<10)
				for i := 0; i < 9<<20/len(line) && h.raw(fmt.Sprintf("X-Chaos-%d: %s\r\n", i, line)); i++ {
				}
				return h.hold()
			}, want: []want{w(ledger.TransportError, ledger.ReasonTransportOther)}},
		{name: "headers_trickle", what: "a 200 status line, then one header line every 50 ms for ever",
			serve: func(h *hconn) bool {
				h.raw("HTTP/1.1 200 OK\r\n")
				for i := 0; h.raw(fmt.Sprintf("X-Chaos-%d: v\r\n", i)) && h.sleep(50*time.Millisecond); i++ {
				}
				return false
			}, want: []want{w(ledger.Timeout, ledger.ReasonHeaders)}},
		{name: "infinite_1xx", heavy: true, covers: "infinite 1xx", what: "103 Early Hints responses with 4 KiB headers, for ever",
			serve: func(h *hconn) bool {
				link := "Link: <" + strings.Repeat("l", 4<<10) + ">; rel=preload"
				for h.head(103, "Early Hints", link) {
				}
				return false
			}, want: []want{w(ledger.TransportError, ledger.ReasonTransportOther)}},
		{name: "1xx_trickle", what: "a 100 Continue every 20 ms, for ever",
			serve: func(h *hconn) bool {
				for h.head(100, "Continue") && h.sleep(20*time.Millisecond) {
				}
				return false
			}, want: []want{w(ledger.Timeout, ledger.ReasonHeaders)}},
		{name: "status_404", what: "404 with an OpenAI error body (wrong model)",
			serve: func(h *hconn) bool {
				return h.full(404, "Not Found", "application/json", `{"error":{"type":"invalid_request_error","code":"model_not_found","message":"no such model"}}`)
			}, want: []want{w(ledger.HTTPError, ledger.ReasonNotFound)}},
		{name: "status_429_retry_after_2099", defect: 11, what: "429 with Retry-After: Thu, 01 Jan 2099 00:00:00 GMT",
			serve: func(h *hconn) bool {
				return h.full(429, "Too Many Requests", "application/json", `{"error":{"type":"rate_limit_error"}}`, "Retry-After: Thu, 01 Jan 2099 00:00:00 GMT")
			}, want: []want{w(ledger.Rejected, ledger.ReasonStatus429)}, check: checkRetryAfterClamped, also: "Retry-After kept as the 1 h bound and marked `retry_after_clamped`"},
		{name: "status_503_retry_after_huge", defect: 11, what: "503 with Retry-After: 99999999999 (seconds)",
			serve: func(h *hconn) bool {
				return h.full(503, "Service Unavailable", "text/plain", "busy", "Retry-After: 99999999999")
			}, want: []want{w(ledger.Rejected, ledger.ReasonStatus503)}, check: checkRetryAfterClamped, also: "Retry-After kept as the 1 h bound and marked `retry_after_clamped`"},
		{name: "status_500_50mb", heavy: true, covers: "500 with a 50 MB body", what: "500 with a 50 MB body",
			serve: func(h *hconn) bool { return bigBody(h, 500, "Internal Server Error", "text/plain", fiftyMB) },
			want:  []want{w(ledger.HTTPError, ledger.ReasonServerError)}},

		// ----- body framing -----
		{name: "gzip_sse", covers: "gzip-encoded SSE", what: "a complete event stream, gzip-encoded (Content-Encoding: gzip) though the client asked for none",
			serve: func(h *hconn) bool {
				if h.models() {
					return healthyModels(h)
				}
				var sse bytes.Buffer
				for _, e := range []string{chatChunk("c", "chaos-model", `{"content":"word "}`, "null"), chatChunk("c", "chaos-model", `{}`, `"stop"`), "[DONE]"} {
					sse.WriteString("data: " + e + "\n\n")
				}
				var gz bytes.Buffer
				zw := gzip.NewWriter(&gz)
				_, _ = zw.Write(sse.Bytes())
				_ = zw.Close()
				return h.full(200, "OK", "text/event-stream", gz.String(), "Content-Encoding: gzip")
			}, want: []want{w(ledger.StreamError, ledger.ReasonContentType)}},
		{name: "broken_chunked", covers: "broken chunked encoding", what: "one event, then a chunk size line that is not hex",
			serve: streamHead(func(h *hconn) bool {
				h.event(chatChunk("c", "chaos-model", `{"content":"word "}`, "null"))
				h.raw("zz\r\nbroken\r\n")
				return h.hold()
			}), want: []want{w(ledger.TransportError, ledger.ReasonTransportOther)}},
		{name: "short_content_length", covers: "short Content-Length", what: "Content-Length: 100000, two events, then the connection closes",
			serve: func(h *hconn) bool {
				if h.models() {
					return healthyModels(h)
				}
				h.head(200, "OK", "Content-Type: text/event-stream", "Content-Length: 100000")
				h.raw("data: " + chatChunk("c", "chaos-model", `{"content":"word "}`, "null") + "\n\n")
				h.raw("data: " + chatChunk("c", "chaos-model", `{"content":"word "}`, "null") + "\n\n")
				return false
			}, want: []want{w(ledger.TransportError, ledger.ReasonConnectionReset)}},
		{name: "rst_mid_stream", covers: "RST mid-stream", what: "two content events, then a TCP RST",
			serve: streamHead(func(h *hconn) bool {
				h.event(chatChunk("c", "chaos-model", `{"content":"word "}`, "null"))
				h.event(chatChunk("c", "chaos-model", `{"content":"word "}`, "null"))
				h.sleep(10 * time.Millisecond)
				return h.reset()
			}), want: []want{w(ledger.TransportError, ledger.ReasonConnectionReset)}},
		{name: "truncated_eof", what: "a close-delimited stream that ends mid-event, without [DONE]",
			serve: func(h *hconn) bool {
				if h.models() {
					return healthyModels(h)
				}
				h.head(200, "OK", "Content-Type: text/event-stream", "Connection: close")
				h.raw("data: " + chatChunk("c", "chaos-model", `{"content":"word "}`, "null") + "\n\ndata: {\"choi")
				return false
			}, want: []want{w(ledger.StreamError, ledger.ReasonTruncated)}},

		// ----- timing -----
		{name: "headers_then_silence", covers: "headers then silence", what: "200 event-stream headers, then nothing",
			serve: streamHead(func(h *hconn) bool { return h.hold() }), want: []want{w(ledger.Timeout, ledger.ReasonIdle)}},
		{name: "drip_1_byte_per_second", covers: "1 byte/s drip", what: "a valid event, one byte a second (the idle timeout is longer than a second: the first-content timeout ends it)",
			serve: streamHead(func(h *hconn) bool {
				ev := "data: " + chatChunk("c", "chaos-model", `{"content":"word "}`, "null") + "\n\n"
				for i := 0; i < len(ev) && h.chunk(ev[i:i+1]) && h.sleep(time.Second); i++ {
				}
				return false
			}), want: []want{w(ledger.Timeout, ledger.ReasonFirstContent)}},
		{name: "keepalive_comments_forever", covers: "keep-alive comments forever", what: "a `: ping` comment every 100 ms, never an event",
			serve: streamHead(func(h *hconn) bool {
				return forever(h, 100*time.Millisecond, func(int) string { return ": ping\n\n" })
			}), want: []want{w(ledger.Timeout, ledger.ReasonFirstContent)}},
		{name: "reasoning_forever", what: "reasoning deltas every 20 ms, never visible content",
			serve: streamHead(func(h *hconn) bool {
				return forever(h, 20*time.Millisecond, func(int) string {
					return "data: " + chatChunk("c", "chaos-model", `{"reasoning_content":"hmm "}`, "null") + "\n\n"
				})
			}), want: []want{w(ledger.Timeout, ledger.ReasonFirstContent)}},
		{name: "content_forever", slow: true, covers: "content forever", what: "content events as fast as it can (20 per write), never a finish",
			serve: streamHead(func(h *hconn) bool {
				ev := "data: " + chatChunk("c", "chaos-model", `{"content":"w "}`, "null") + "\n\n"
				batch := strings.Repeat(ev, 20)
				return forever(h, time.Millisecond, func(int) string { return batch })
			}), want: []want{w(ledger.Timeout, ledger.ReasonTotal)}},
		{name: "content_trickle_forever", what: "one content event every 200 ms (under the idle timeout), never a finish",
			serve: streamHead(func(h *hconn) bool {
				return forever(h, 200*time.Millisecond, func(int) string {
					return "data: " + chatChunk("c", "chaos-model", `{"content":"w "}`, "null") + "\n\n"
				})
			}), want: []want{w(ledger.Timeout, ledger.ReasonTotal)}},
		{name: "content_then_silence", what: "three content events, then nothing",
			serve: streamHead(func(h *hconn) bool {
				for range 3 {
					h.event(chatChunk("c", "chaos-model", `{"content":"word "}`, "null"))
				}
				return h.hold()
			}), want: []want{w(ledger.Timeout, ledger.ReasonIdle)}},

		// ----- size -----
		{name: "event_10mb", heavy: true, covers: "10 MB event", what: "one event of ten 1 MB data lines (10 MB in all)",
			serve: streamHead(func(h *hconn) bool {
				line := "data: " + strings.Repeat("a", 1<<20-100) + "\n"
				for range 10 {
					if !h.chunk(line) {
						return false
					}
				}
				h.chunk("\n")
				return h.hold()
			}), want: []want{w(ledger.StreamError, ledger.ReasonEventTooLarge)}},
		{name: "line_10mb", heavy: true, what: "one 10 MB data line without a line end",
			serve: streamHead(func(h *hconn) bool {
				h.chunk("data: {")
				for n := 0; n < tenMB && h.chunk(filler); n += len(filler) {
				}
				return h.hold()
			}), want: []want{w(ledger.StreamError, ledger.ReasonEventTooLarge)}},
		{name: "comment_10mb", heavy: true, what: "a 10 MB comment line, then a well-formed stream (comments are skipped, never buffered)",
			serve: streamHead(func(h *hconn) bool {
				h.chunk(": ")
				for n := 0; n < tenMB && h.chunk(filler); n += len(filler) {
				}
				h.chunk("\n\n")
				h.event(chatChunk("c", "chaos-model", `{"content":"word "}`, "null"))
				h.event(chatChunk("c", "chaos-model", `{}`, `"stop"`))
				h.event("[DONE]")
				return h.end()
			}), want: []want{w(ledger.OK, ledger.ReasonStop)}},
		{name: "choices_20000", heavy: true, covers: "20,000 choices", what: "a chunk with 20,000 choices, each with content",
			serve: streamHead(func(h *hconn) bool {
				var b strings.Builder
				b.WriteString(`{"id":"c","object":"chat.completion.chunk","model":"chaos-model","choices":[`)
				for i := range 20000 {
					if i > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `{"index":%d,"delta":{"content":"x"}}`, i)
				}
				b.WriteString(`]}`)
				h.event(b.String())
				h.event(chatChunk("c", "chaos-model", `{}`, `"stop"`))
				h.event("[DONE]")
				return h.end()
			}), want: []want{w(ledger.OK, ledger.ReasonStop)}},
		{name: "finish_reason_20kb", covers: "20 KB finish reason", what: "a well-formed stream whose finish_reason is 20 KB long",
			serve: func(h *hconn) bool { return serveStream(h, stream{finish: strings.Repeat("abcdefghij", 2048)}) },
			want:  []want{w(ledger.OK, ledger.ReasonOther)}},
		{name: "model_10kb", what: "a well-formed stream whose model name is 10 KB of multi-byte characters",
			serve: func(h *hconn) bool { return serveStream(h, stream{model: strings.Repeat("modèle-", 1300)}) },
			want:  []want{w(ledger.OK, ledger.ReasonStop)}},

		// ----- content -----
		{name: "invalid_json", covers: "invalid JSON", what: "a chunk cut off in the middle of its JSON",
			serve: streamHead(func(h *hconn) bool {
				h.event(chatChunk("c", "chaos-model", `{"content":"word "}`, "null"))
				h.event(`{"id":"c","choices":[{"delta":{"content":"wo`)
				return h.hold()
			}), want: []want{w(ledger.StreamError, ledger.ReasonMalformed)}},
		{name: "json_not_object", what: "a chunk that is a JSON array",
			serve: streamHead(func(h *hconn) bool { h.event(`[1,2,3]`); return h.hold() }),
			want:  []want{w(ledger.StreamError, ledger.ReasonMalformed)}},
		{name: "deep_json", heavy: true, what: "a chunk nested 100,000 arrays deep",
			serve: streamHead(func(h *hconn) bool {
				h.event(`{"choices":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`)
				return h.hold()
			}), want: []want{w(ledger.StreamError, ledger.ReasonMalformed)}},
		{name: "in_band_error_mid_stream", covers: "in-band error mid-stream", what: "two content events, then an {\"error\": …} chunk",
			serve: streamHead(func(h *hconn) bool {
				h.event(chatChunk("c", "chaos-model", `{"content":"word "}`, "null"))
				h.event(chatChunk("c", "chaos-model", `{"content":"word "}`, "null"))
				h.event(`{"error":{"type":"server_error","code":"overloaded","message":"the GPU caught fire"}}`)
				return h.hold()
			}), want: []want{w(ledger.StreamError, ledger.ReasonInBandError)}},
		{name: "error_event", what: "an `event: error` after one content event",
			serve: streamHead(func(h *hconn) bool {
				h.event(chatChunk("c", "chaos-model", `{"content":"word "}`, "null"))
				h.named("error", `{"message":"stream failed"}`)
				return h.hold()
			}), want: []want{w(ledger.StreamError, ledger.ReasonInBandError)}},
		{name: "error_field_then_done", what: "a role chunk, a non-standard `error: {…}` field line, then data: [DONE] (llama.cpp's server on a failed request, early 2025)",
			serve: streamHead(func(h *hconn) bool {
				h.event(chatChunk("c", "chaos-model", `{"role":"assistant","content":null}`, "null"))
				h.chunk(`error: {"code":500,"message":"Failed to parse input at pos 3","type":"server_error"}` + "\n\n")
				h.event("[DONE]")
				return h.end()
			}), want: []want{w(ledger.StreamError, ledger.ReasonInBandError)},
			check: checkSaysWhat("(server_error/500): Failed to parse input", "malformed"), also: "the error keeps the server's message, sanitised"},
		{name: "error_payload_then_end", what: "a role chunk, then data: {\"error\": …} and the body ends: no finish reason, no [DONE] (llama.cpp's server on a broken UTF-8 token)",
			serve: streamHead(func(h *hconn) bool {
				h.event(chatChunk("c", "chaos-model", `{"role":"assistant","content":null}`, "null"))
				h.event(`{"error":{"code":500,"message":"Failed to parse input at pos 22","type":"server_error"}}`)
				return h.end()
			}), want: []want{w(ledger.StreamError, ledger.ReasonInBandError)}},
		{name: "role_only_done", what: "only a role chunk, then data: [DONE]: no content, finish reason or usage",
			serve: streamHead(func(h *hconn) bool {
				h.event(chatChunk("c", "chaos-model", `{"role":"assistant","content":null}`, "null"))
				h.event("[DONE]")
				return h.end()
			}), want: []want{w(ledger.StreamError, ledger.ReasonNoContent)}},
		{name: "only_done", what: "a 200 event stream that is only data: [DONE]",
			serve: streamHead(func(h *hconn) bool { h.event("[DONE]"); return h.end() }),
			want:  []want{w(ledger.StreamError, ledger.ReasonNoContent)}},
		{name: "finish_without_done", what: "content, a finish reason and usage, then the body ends without data: [DONE]",
			serve: streamHead(func(h *hconn) bool {
				h.event(chatChunk("c", "chaos-model", `{"content":"word "}`, "null"))
				h.event(chatChunk("c", "chaos-model", `{}`, `"stop"`))
				h.event(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"chaos-model","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
				return h.end()
			}), want: []want{w(ledger.OK, ledger.ReasonStop)}},
		{name: "data_after_done", what: "a well-formed stream, then another chunk after [DONE]",
			serve: streamHead(func(h *hconn) bool {
				h.event(chatChunk("c", "chaos-model", `{"content":"word "}`, "null"))
				h.event(chatChunk("c", "chaos-model", `{}`, `"stop"`))
				h.event("[DONE]")
				h.event(chatChunk("c", "chaos-model", `{"content":"more"}`, "null"))
				return h.end()
			}), want: []want{w(ledger.StreamError, ledger.ReasonDataAfterDone)}},
		{name: "html_200", covers: "200 text/html", what: "200 with an HTML page",
			serve: func(h *hconn) bool {
				return h.full(200, "OK", "text/html; charset=utf-8", "<html><body><h1>Welcome to nginx!</h1></body></html>")
			}, want: []want{w(ledger.StreamError, ledger.ReasonContentType)}},
		{name: "no_content_type", what: "200 with an event stream body but no Content-Type",
			serve: func(h *hconn) bool {
				return h.full(200, "OK", "", "data: [DONE]\n\n")
			}, want: []want{w(ledger.StreamError, ledger.ReasonContentType)}},
		{name: "json_error_body_200", covers: "200 JSON error body", what: "200 application/json whose body is an {\"error\": …} object",
			serve: func(h *hconn) bool {
				return h.full(200, "OK", "application/json", `{"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"too long"}}`)
			}, want: []want{w(ledger.HTTPError, ledger.ReasonErrorBody)}},
		{name: "non_utf8_bytes", covers: "non-UTF-8 bytes", what: "invalid UTF-8 in the id, model, content and event name",
			serve: func(h *hconn) bool {
				return serveStream(h, stream{model: "chaos-\xff\xfe-model", id: "c\xc3\x28", contents: []string{"caf\xe9 ", "\xed\xa0\x80 "}})
			}, want: []want{w(ledger.OK, ledger.ReasonStop)}},
		{name: "control_characters", defect: 13, covers: "control characters", what: "ESC, BEL, NUL, DEL and bidi overrides in the model name and content",
			serve: func(h *hconn) bool {
				return serveStream(h, stream{model: "chaos\u001b[31m\u0007\u0000\u007f\u202emodel", contents: []string{"\u001b[2J", "\u0000"}})
			}, want: []want{w(ledger.OK, ledger.ReasonStop)}},
		{name: "usage_negative", defect: 1, covers: "usage negative", what: "usage with negative token counts",
			serve: func(h *hconn) bool {
				return serveStream(h, stream{usage: `{"prompt_tokens":-5,"completion_tokens":-10,"total_tokens":-15}`})
			}, want: []want{w(ledger.OK, ledger.ReasonStop)}, check: checkUsageUnknown, also: "usage unknown and flagged `invalid`; no token counted; a budget is charged the request's upper bound (prompt estimate + max tokens)"},
		{name: "usage_int64_max", defect: 5, covers: "usage int64 max", what: "usage of 9223372036854775807 tokens, against a 1,000-token daily budget",
			serve: func(h *hconn) bool {
				const m = "9223372036854775807"
				return serveStream(h, stream{usage: `{"prompt_tokens":` + m + `,"completion_tokens":` + m + `,"total_tokens":` + m + `}`})
			}, budget: 1000, want: []want{w(ledger.OK, ledger.ReasonStop)}, check: checkUsageUnknown, also: "usage unknown and flagged `invalid`; no token counted; the budget is charged each request's upper bound (prompt estimate + max tokens), never the absurd count"},
		{name: "usage_float", defect: 13, covers: "usage float", what: "usage with fractional token counts (valid JSON of the wrong type: the error says which member)",
			serve: func(h *hconn) bool {
				return serveStream(h, stream{usage: `{"prompt_tokens":12.5,"completion_tokens":4.5,"total_tokens":17}`})
			}, want: []want{w(ledger.StreamError, ledger.ReasonMalformed)}, check: checkSaysWhat("usage.", "not valid JSON"), also: "the error names the member (`usage.…`), not \"not valid JSON\""},

		// ----- other APIs -----
		{name: "anthropic_unclosed_block", covers: "Anthropic unclosed block", api: "anthropic-messages",
			what: "message_stop while content block 0 was never stopped",
			serve: streamHead(func(h *hconn) bool {
				h.named("message_start", `{"type":"message_start","message":{"model":"chaos-model","usage":{"input_tokens":3}}}`)
				h.named("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
				h.named("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`)
				h.named("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`)
				h.named("message_stop", `{"type":"message_stop"}`)
				return h.end()
			}), want: []want{w(ledger.StreamError, ledger.ReasonProtocolError)}},
		{name: "anthropic_no_content", api: "anthropic-messages", what: "message_start then message_stop: no content block, no stop reason, no output usage",
			serve: streamHead(func(h *hconn) bool {
				h.named("message_start", `{"type":"message_start","message":{"model":"chaos-model","usage":{"input_tokens":3}}}`)
				h.named("message_stop", `{"type":"message_stop"}`)
				return h.end()
			}), want: []want{w(ledger.StreamError, ledger.ReasonNoContent)}},
		{name: "anthropic_error_payload", api: "anthropic-messages", what: "a text delta, then a bare data: {\"error\": …} with no event line and no type",
			serve: streamHead(func(h *hconn) bool {
				h.named("message_start", `{"type":"message_start","message":{"model":"chaos-model","usage":{"input_tokens":3}}}`)
				h.named("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
				h.named("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`)
				h.event(`{"error":{"type":"overloaded_error","message":"Overloaded"}}`)
				return h.end()
			}), want: []want{w(ledger.StreamError, ledger.ReasonInBandError)}},
		{name: "responses_error_field", api: "openai-responses", what: "response.created, then a non-standard `error: {…}` field line, and the body ends",
			serve: streamHead(func(h *hconn) bool {
				h.named("response.created", `{"type":"response.created","response":{"id":"r","status":"in_progress","model":"chaos-model"}}`)
				h.chunk(`error: {"code":500,"message":"boom","type":"server_error"}` + "\n\n")
				return h.end()
			}), want: []want{w(ledger.StreamError, ledger.ReasonInBandError)}},
		{name: "anthropic_missing_start", covers: "Anthropic missing start event", api: "anthropic-messages",
			what: "content blocks without message_start",
			serve: streamHead(func(h *hconn) bool {
				h.named("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
				h.named("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`)
				return h.hold()
			}), want: []want{w(ledger.StreamError, ledger.ReasonProtocolError)}},
		{name: "anthropic_delta_without_block", api: "anthropic-messages", what: "a text delta for a content block that was never started",
			serve: streamHead(func(h *hconn) bool {
				h.named("message_start", `{"type":"message_start","message":{"model":"chaos-model"}}`)
				h.named("content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"hi"}}`)
				return h.hold()
			}), want: []want{w(ledger.StreamError, ledger.ReasonProtocolError)}},
		{name: "anthropic_ends_block_open", api: "anthropic-messages", what: "a stop_reason while a content block is open, then the body ends without content_block_stop and message_stop",
			serve: streamHead(func(h *hconn) bool {
				h.named("message_start", `{"type":"message_start","message":{"model":"chaos-model","usage":{"input_tokens":3}}}`)
				h.named("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
				h.named("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`)
				h.named("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`)
				return h.end()
			}), want: []want{w(ledger.StreamError, ledger.ReasonTruncated)}},
		{name: "anthropic_no_message_stop", api: "anthropic-messages", what: "a well-formed stream whose body ends after message_delta (stop_reason, usage), without message_stop: only the marker is missing",
			serve: func(h *hconn) bool { return serveStream(h, stream{noDone: true}) },
			want:  []want{w(ledger.OK, ledger.ReasonStop)}},
		{name: "responses_missing_created", covers: "Responses missing start event", api: "openai-responses",
			what: "output text deltas without response.created",
			serve: streamHead(func(h *hconn) bool {
				h.named("response.output_text.delta", `{"type":"response.output_text.delta","delta":"hi"}`)
				return h.hold()
			}), want: []want{w(ledger.StreamError, ledger.ReasonProtocolError)}},
		{name: "responses_unclosed", covers: "Responses unclosed block", api: "openai-responses",
			what:  "an output item added and text deltas, then the body ends with no terminal event",
			serve: func(h *hconn) bool { return serveStream(h, stream{noDone: true}) },
			want:  []want{w(ledger.StreamError, ledger.ReasonTruncated)}},

		// ----- the key, echoed -----
		{name: "echo_key_everywhere", defect: 4, identity: true, covers: "server echoing the key into every field",
			what: "the request's key as the id, model, finish reason and content, in response headers, and as the identity header and models field",
			serve: func(h *hconn) bool {
				if h.models() {
					return h.full(200, "OK", "application/json",
						`{"object":"list","data":[{"id":"chaos-model","object":"model","root":`+q(h.key)+`,"owned_by":`+q(h.key)+`}]}`,
						"X-Build: "+h.key, "X-Echo: "+h.key)
				}
				return serveStream(h, stream{id: h.key, model: h.key, finish: h.key, contents: []string{h.key, h.key}})
			}, want: []want{w(ledger.OK, ledger.ReasonOther)}},
		{name: "echo_key_in_band_error", defect: 4, what: "an in-band error whose type, code, message and param are the key",
			serve: streamHead(func(h *hconn) bool {
				h.event(`{"error":{"type":` + q(h.key) + `,"code":` + q(h.key) + `,"message":` + q(h.key) + `,"param":` + q(h.key) + `}}`)
				return h.hold()
			}), want: []want{w(ledger.StreamError, ledger.ReasonInBandError)}},
		{name: "echo_key_401", defect: 4, what: "401 whose error body and WWW-Authenticate header hold the key",
			serve: func(h *hconn) bool {
				return h.full(401, "Unauthorized", "application/json", `{"error":{"type":`+q(h.key)+`,"code":`+q("invalid_api_key:"+h.key)+`,"message":"bad key `+h.key+`"}}`,
					"WWW-Authenticate: Bearer realm="+q(h.key))
			}, want: []want{w(ledger.HTTPError, ledger.ReasonUnauthorized)}},
		{name: "echo_key_error_body_200", defect: 4, what: "200 application/json whose error object holds the key",
			serve: func(h *hconn) bool {
				return h.full(200, "OK", "application/json", `{"error":{"type":`+q(h.key)+`,"code":`+q(h.key)+`}}`)
			}, want: []want{w(ledger.HTTPError, ledger.ReasonErrorBody)}},
		{name: "echo_key_429", defect: 4, what: "429 whose error body and Retry-After hold the key",
			serve: func(h *hconn) bool {
				return h.full(429, "Too Many Requests", "application/json", `{"error":{"type":`+q(h.key)+`,"code":`+q(h.key)+`}}`, "Retry-After: "+h.key)
			}, want: []want{w(ledger.Rejected, ledger.ReasonStatus429)}},
		{name: "echo_key_content_type", defect: 4, what: "200 whose Content-Type names the key",
			serve: func(h *hconn) bool {
				return h.full(200, "OK", "text/html; charset="+strings.ReplaceAll(h.key, " ", "-"), "<html></html>")
			}, want: []want{w(ledger.StreamError, ledger.ReasonContentType)}},
		{name: "echo_key_header_line", defect: 4, identity: true, what: "a response whose header line is the key (no colon): a malformed header, on every path",
			serve: func(h *hconn) bool {
				h.raw("HTTP/1.1 200 OK\r\n" + h.key + "\r\n\r\n")
				return false
			}, want: []want{w(ledger.TransportError, ledger.ReasonTransportOther)}},
		{name: "echo_key_status_line", defect: 4, identity: true, what: "a status line whose status code is the key, on every path",
			serve: func(h *hconn) bool {
				h.raw("HTTP/1.1 " + h.key + "\r\n\r\n")
				return false
			}, want: []want{w(ledger.TransportError, ledger.ReasonTransportOther)}},
		{name: "echo_key_anthropic", defect: 4, api: "anthropic-messages", what: "Anthropic events typed with the key before message_start",
			serve: streamHead(func(h *hconn) bool {
				h.named(h.key, `{"type":`+q(h.key)+`}`)
				return h.hold()
			}), want: []want{w(ledger.StreamError, ledger.ReasonProtocolError)}},
		{name: "echo_key_anthropic_error", defect: 4, api: "anthropic-messages", what: "an Anthropic error event whose type and message are the key",
			serve: streamHead(func(h *hconn) bool {
				h.named("message_start", `{"type":"message_start","message":{"model":`+q(h.key)+`}}`)
				h.named("error", `{"type":"error","error":{"type":`+q(h.key)+`,"message":`+q(h.key)+`}}`)
				return h.hold()
			}), want: []want{w(ledger.StreamError, ledger.ReasonInBandError)}},
		{name: "echo_key_responses_failed", defect: 4, api: "openai-responses", what: "a Responses stream that fails with the key as error code and message",
			serve: streamHead(func(h *hconn) bool {
				h.named("response.created", `{"type":"response.created","response":{"model":`+q(h.key)+`}}`)
				h.named("response.failed", `{"type":"response.failed","response":{"model":`+q(h.key)+`,"error":{"code":`+q(h.key)+`,"message":`+q(h.key)+`}}}`)
				return h.hold()
			}), want: []want{w(ledger.StreamError, ledger.ReasonInBandError)}},

		// ----- identity -----
		{name: "identity_header_not_utf8", defect: 2, identity: true, covers: "non-UTF-8 identity header", what: "a healthy stream; the identity header and models field are `caf\\xe9`",
			serve: func(h *hconn) bool {
				if h.models() {
					return h.full(200, "OK", "application/json", `{"object":"list","data":[{"id":"chaos-model","root":"caf`+"\xe9"+`"}]}`, "X-Build: caf\xe9")
				}
				return healthy(h)
			}, want: []want{w(ledger.OK, ledger.ReasonStop)}, check: checkIdentity, also: "`llmprobe_target_info` published, its labels valid UTF-8 and at most 128 bytes"},
		{name: "identity_long_multibyte", defect: 3, identity: true, what: "a healthy stream; the model name, identity header and models field are 301 bytes, mostly two-byte characters (a cut at 128 bytes falls inside one)",
			serve: func(h *hconn) bool {
				if h.models() {
					v := "x" + strings.Repeat("é", 150) // odd: a cut at 128 bytes falls inside a character
					return h.full(200, "OK", "application/json", `{"object":"list","data":[{"id":"chaos-model","root":`+q(v)+`}]}`, "X-Build: "+v)
				}
				return serveStream(h, stream{model: "x" + strings.Repeat("é", 150)})
			}, want: []want{w(ledger.OK, ledger.ReasonStop)}, check: checkIdentity, also: "`llmprobe_target_info` published, its labels valid UTF-8 and at most 128 bytes"},

		// ----- what the fixes of issue 8 bound -----
		{name: "buffered_bytes_bound", defect: 7, what: "900 KB of an event that never ends, then silence, on every stream (the process-wide bound on buffered event bytes set to 2 MiB + 16 KiB, the least the default 1 MiB events allow)",
			probeArgs: []string{"--max-buffered-bytes", "2113536"}, daemonGlobal: "limits: {max_buffered_bytes: 2113536}",
			serve: streamHead(func(h *hconn) bool {
				h.chunk("data: {")
				for n := 0; n < 900<<10 && h.chunk(filler); n += len(filler) {
				}
				return h.hold()
			}), want: []want{w(ledger.StreamError, ledger.ReasonBufferLimit), w(ledger.Timeout, ledger.ReasonIdle)}, all: true},
		{name: "closed_loop_refused", defect: 6, kind: refusedPort, probeOnly: true,
			what:      "nothing listens, and the probe runs closed loop (4 users, no think time)",
			probeArgs: []string{"--closed-loop-users", "4", "--think-time", "constant:0s"},
			want:      []want{w(ledger.TransportError, ledger.ReasonConnectionRefused)},
			check:     checkClosedLoopBackoff, also: "each user waits the failure backoff (100 ms doubling): at most 20 requests in 1.5 s, not thousands"},
		{name: "retries_refused", defect: 6, kind: refusedPort, what: "nothing listens; retries on (the probe's --retries 2, the daemon's retries.max_attempts 3)",
			probeArgs: []string{"--retries", "2"}, daemonTarget: "retries: {max_attempts: 3}",
			want:  []want{w(ledger.TransportError, ledger.ReasonConnectionRefused)},
			check: checkRetryBackoff, also: "every retry waits its backoff after the attempt it repeats"},
		{name: "usage_spends_budget", defect: 5, noPhase: true, what: "usage of 100,000,000 prompt and completion tokens (the most believed), against a 1,000-token daily budget",
			serve: func(h *hconn) bool {
				return serveStream(h, stream{usage: `{"prompt_tokens":100000000,"completion_tokens":100000000,"total_tokens":200000000}`})
			}, budget: 1000, want: []want{w(ledger.OK, ledger.ReasonStop), w(ledger.Unsent, ledger.ReasonBudget)},
			check: checkBudgetSpent, also: "the daemon: the first answer spends the budget, later arrivals are `unsent/budget`, the remaining-tokens gauge is 0"},
		{name: "probe_sighup", defect: 12, probeOnly: true, hupProbe: true,
			what:  "a healthy stream of 4 content events 100 ms apart; the probe gets SIGHUP 700 ms in",
			serve: func(h *hconn) bool { return serveStream(h, stream{gap: 100 * time.Millisecond}) },
			want:  []want{w(ledger.OK, ledger.ReasonStop)}, check: checkInterrupted,
			also: "the probe ends the window early as on SIGINT: exit 0, a complete report (noted interrupted) and ledger"},
	}
}
