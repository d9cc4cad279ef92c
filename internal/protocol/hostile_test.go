package protocol

import (
	"bufio"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol/sse"
	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// reflectedKey is the API key the echoing servers below send back.
const reflectedKey = "sk-live-REFLECTED-0123456789abcdefXYZ"

// echoKey returns what the request authenticated with: the x-api-key value
// or the whole Authorization header ("Bearer <key>").
func echoKey(r *http.Request) string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	return r.Header.Get("Authorization")
}

// TestReflectedKeyNeverKept (issue 8, defect 4): a target that echoes the
// request's API key back (in the model, the finish reason, an in-band
// error, a 401 body, an error body, a content type) never gets it, whole or
// cut off, into the record or the error text: the Client cleans every
// server string with a Redactor that knows its key.
func TestReflectedKeyNeverKept(t *testing.T) {
	t.Setenv("LLMPROBE_TEST_REFLECTED_KEY", reflectedKey)
	js := func(s string) string { return strings.ReplaceAll(s, `"`, `\"`) }
	tests := []struct {
		name    string
		adapter Adapter
		h       func(w http.ResponseWriter, r *http.Request)
		outcome ledger.Outcome
	}{
		{"model and finish reason", OpenAIChat{}, func(w http.ResponseWriter, r *http.Request) {
			k := js(echoKey(r))
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"model\":\"%s\",\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n", k)
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"x%s\"}]}\n\ndata: [DONE]\n\n", k[:20])
		}, ledger.OK},
		{"in-band error", OpenAIChat{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"error\":{\"type\":\"%s\",\"code\":\"%s\"}}\n\n", js(echoKey(r)), js(strings.TrimPrefix(echoKey(r), "Bearer ")))
		}, ledger.StreamError},
		{"401 body", OpenAIChat{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"type":"invalid key %s","code":"%s"}}`, js(echoKey(r)), js(echoKey(r)))
		}, ledger.HTTPError},
		{"200 error body", OpenAIChat{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"error":{"type":"%s"}}`, js(echoKey(r)))
		}, ledger.HTTPError},
		{"content type", OpenAIChat{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/"+strings.TrimPrefix(echoKey(r), "Bearer "))
			io.WriteString(w, "hello")
		}, ledger.StreamError},
		{"anthropic x-api-key", AnthropicMessages{}, func(w http.ResponseWriter, r *http.Request) {
			k := js(echoKey(r))
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"%s\"}}\n\n", k)
			fmt.Fprintf(w, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"%s\"}}\n\n", k)
		}, ledger.StreamError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(tt.h))
			defer srv.Close()
			c, err := NewClient(ClientOptions{Auth: AuthOptions{KeyEnv: "LLMPROBE_TEST_REFLECTED_KEY"}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			l := ledger.New(time.Now())
			rec := l.Plan(ledger.Meta{Target: "t"}, l.Now())
			res := c.Do(context.Background(), Target{Base: srv.URL, Adapter: tt.adapter}, Params{}, rec, l.Now, func() { l.MarkDispatched(rec) })
			if res.Outcome != tt.outcome {
				t.Fatalf("result %+v, want outcome %s", res, tt.outcome)
			}
			for _, s := range []string{rec.Model, rec.FinishReason, res.Err} {
				if strings.Contains(s, reflectedKey[:sanitize.MinFragment]) {
					t.Errorf("the key (or its start) was kept: %q", s)
				}
			}
			if all := rec.Model + rec.FinishReason + res.Err; !strings.Contains(all, sanitize.Marker) {
				t.Errorf("model %q, finish %q, error %q: want the echoed key shown as %s", rec.Model, rec.FinishReason, res.Err, sanitize.Marker)
			}
		})
	}
}

// TestSecretHeaderValuesRedacted: the value of an extra header whose name
// looks secret is a known secret too, and so is any value the caller's
// Redactor knows (e.g. from header_env) whatever its header's name: X-Org-Id
// does not look secret, only ClientOptions.Redactor says it is.
func TestSecretHeaderValuesRedacted(t *testing.T) {
	const hdrSecret, envSecret = "hdr-secret-value-123456", "env-secret-value-654321"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"model\":\"%s %s\",\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
			r.Header.Get("X-Custom-Token"), r.Header.Get("X-Org-Id"))
	}))
	defer srv.Close()
	c, err := NewClient(ClientOptions{
		Headers:  http.Header{"X-Custom-Token": {hdrSecret}, "X-Org-Id": {envSecret}},
		Redactor: sanitize.NewRedactor(envSecret),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	_, rec := probe(t, c, context.Background(), srv.URL, Params{})
	if want := sanitize.Marker + " " + sanitize.Marker; rec.Model != want {
		t.Errorf("model %q, want %q", rec.Model, want)
	}
}

// TestBareCredentialsRedacted: a secret given as a whole Authorization
// value ("Bearer <token>" in headers, or through the caller's Redactor as a
// header_env value is) is redacted when the server echoes the token alone.
func TestBareCredentialsRedacted(t *testing.T) {
	const hdrTok, envTok = "sk-hdr-0123456789abcdef", "sk-env-fedcba9876543210"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, a, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		_, b, _ := strings.Cut(r.Header.Get("X-Upstream-Id"), " ")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"type":"invalid key %s","code":"%s"}}`, a, b)
	}))
	defer srv.Close()
	c, err := NewClient(ClientOptions{
		Headers:  http.Header{"Authorization": {"Bearer " + hdrTok}, "X-Upstream-Id": {"bearer " + envTok}},
		Redactor: sanitize.NewRedactor("bearer " + envTok),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	res, _ := probe(t, c, context.Background(), srv.URL, Params{})
	if res.Outcome != ledger.HTTPError {
		t.Fatalf("result %+v, want http_error", res)
	}
	for _, tok := range []string{hdrTok, envTok} {
		if strings.Contains(res.Err, tok[:sanitize.MinFragment]) {
			t.Errorf("error %q holds the token %s (or its start)", res.Err, tok)
		}
	}
	if strings.Count(res.Err, sanitize.Marker) < 2 {
		t.Errorf("error %q: want both echoed tokens shown as %s", res.Err, sanitize.Marker)
	}
}

// TestServerStringsCleanedAlike (issue 8, defect 13): the model and the
// finish reason are cleaned by the same rule: control characters (ESC, BEL,
// NUL) and invalid UTF-8 become U+FFFD, and both are bounded.
func TestServerStringsCleanedAlike(t *testing.T) {
	const raw = `m\u001b[31m\u0007\u0000x`
	const want = "m\uFFFD[31m\uFFFD\uFFFDx"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"model\":\"%s\",\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n", raw)
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"%s\"}]}\n\n", raw)
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	c, err := NewClient(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	res, rec := probe(t, c, context.Background(), srv.URL, Params{})
	if res.Outcome != ledger.OK || rec.Model != want || rec.FinishReason != want {
		t.Errorf("result %+v, model %q, finish %q: want ok and both %q", res, rec.Model, rec.FinishReason, want)
	}

	long := strings.Repeat("é", 400) + "\xff"
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"model\":\"%s\",\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"%s\"}]}\n\ndata: [DONE]\n\n", long, strings.Repeat("f", 20<<10))
	}))
	defer srv2.Close()
	_, rec = probe(t, c, context.Background(), srv2.URL, Params{})
	if len(rec.Model) > maxModel || len(rec.FinishReason) > maxFinishReason || !strings.HasPrefix(rec.Model, "éé") || strings.ContainsRune(rec.Model, '\uFFFD') {
		t.Errorf("model %q (%d bytes), finish reason of %d bytes: want both bounded, cut at a rune boundary", rec.Model, len(rec.Model), len(rec.FinishReason))
	}
}

// TestUnexpectedJSONSaysWhat (issue 8, defect 13): valid JSON of the wrong
// shape (a float usage count, an object finish reason) is a malformed
// stream whose error says which member was unexpected and how, never "not
// valid JSON"; invalid JSON still says so.
func TestUnexpectedJSONSaysWhat(t *testing.T) {
	tests := []struct {
		api, name, data, want string
	}{
		{APIOpenAIChat, "", `{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":12.5}}`, "chunk: usage.completion_tokens: want an integer, got a number with a fraction or exponent"},
		{APIOpenAIChat, "", `{"choices":[{"delta":{},"finish_reason":{"why":"stop"}}]}`, "chunk: choices.finish_reason: want a string, got an object"},
		{APIOpenAIChat, "", `{"choices":{}}`, "chunk: choices: want a list, got an object"},
		{APIOpenAIChat, "", `{"choices":[{"delta":{"content":"x"}}],"usage":{"prompt_tokens":123456789012345678901234567890}}`, "usage.prompt_tokens: want an integer, got an integer out of range"},
		{APIOpenAIChat, "", `{"choices":[`, "chunk is not valid JSON"},
		{APIOpenAICompletions, "", `{"choices":[{"text":"x","finish_reason":["stop"]}]}`, "chunk: choices.finish_reason: want a string, got a list"},
		{APIOpenAICompletions, "", `{"choices":[],"usage":{"prompt_tokens":1.0}}`, "chunk: usage.prompt_tokens: want an integer, got a number with a fraction or exponent"},
		{APIOpenAIResponses, "", `{"type":"response.created","response":{"model":7}}`, "event: response.model: want a string, got"},
		{APIAnthropicMessages, "", `{"type":"message_start","message":{"model":"m","usage":{"input_tokens":2.5}}}`, "event: message.usage.input_tokens: want an integer, got a number with a fraction or exponent"},
		{APIAnthropicMessages, "", `{"type":"content_block_start","index":"0","content_block":{"type":"text","text":""}}`, "event: index: want an integer, got a string"},
	}
	for _, tt := range tests {
		t.Run(tt.api+" "+tt.want, func(t *testing.T) {
			a, err := Lookup(tt.api)
			if err != nil {
				t.Fatal(err)
			}
			d := a.NewDecoder()
			if tt.api == APIAnthropicMessages && !strings.Contains(tt.data, "message_start") {
				if _, err := d.Decode("", []byte(`{"type":"message_start","message":{"model":"m"}}`)); err != nil {
					t.Fatal(err)
				}
			}
			_, err = d.Decode(tt.name, []byte(tt.data))
			if r, _ := ReasonOf(err); r != ledger.ReasonMalformed {
				t.Fatalf("error %v (reason %q), want malformed", err, r)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
	// Through the client: the report's error text says it too.
	srv := httptest.NewServer(streamHandler(content("a"), step{raw: `data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2.0}}` + "\n\n"}, done))
	defer srv.Close()
	c, err := NewClient(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	res, _ := probe(t, c, context.Background(), srv.URL, Params{})
	if res.Outcome != ledger.StreamError || res.Reason != ledger.ReasonMalformed || !strings.Contains(res.Err, "usage.completion_tokens: want an integer") {
		t.Errorf("result %+v: want malformed naming usage.completion_tokens", res)
	}
}

// TestUsageCheckedAtDecode (issue 8, defect 1): negative and absurd token
// counts are dropped where they are decoded, for every API: the usage is
// unknown and flagged, never a count that could reach a counter or budget.
// The stream itself is still ok and every timing is kept.
func TestUsageCheckedAtDecode(t *testing.T) {
	const big = "9223372036854775807"
	type usageCase struct{ prompt, completion string }
	cases := []struct {
		name string
		u    usageCase
		want ledger.Usage
	}{
		{"believable", usageCase{"7", "3"}, ledger.Usage{Known: true, Prompt: 7, Completion: 3}},
		{"negative", usageCase{"-5", "3"}, ledger.Usage{Invalid: true}},
		{"int64 max", usageCase{"1", big}, ledger.Usage{Invalid: true}},
		{"just above the bound", usageCase{"1", fmt.Sprint(ledger.MaxUsageTokens + 1)}, ledger.Usage{Invalid: true}},
	}
	streams := map[string]func(u usageCase) string{
		APIOpenAIChat: func(u usageCase) string {
			return "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n" +
				"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":" + u.prompt + ",\"completion_tokens\":" + u.completion + "}}\n\ndata: [DONE]\n\n"
		},
		APIOpenAICompletions: func(u usageCase) string {
			return "data: {\"choices\":[{\"text\":\"hi\",\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":" + u.prompt + ",\"completion_tokens\":" + u.completion + "}}\n\ndata: [DONE]\n\n"
		},
		APIOpenAIResponses: func(u usageCase) string {
			return "data: {\"type\":\"response.created\",\"response\":{}}\n\n" +
				"data: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\n" +
				"data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":" + u.prompt + ",\"output_tokens\":" + u.completion + "}}}\n\n"
		},
		APIAnthropicMessages: func(u usageCase) string {
			return "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":" + u.prompt + "}}}\n\n" +
				"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"hi\"}}\n\n" +
				"data: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
				"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":" + u.completion + "}}\n\n" +
				"data: {\"type\":\"message_stop\"}\n\n"
		},
	}
	c, err := NewClient(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for api, stream := range streams {
		for _, tc := range cases {
			t.Run(api+" "+tc.name, func(t *testing.T) {
				res, rec := probeSSE(t, c, api, stream(tc.u))
				if res.Outcome != ledger.OK {
					t.Fatalf("result %+v: want ok (a bad count is not a failed stream)", res)
				}
				if rec.Usage != tc.want {
					t.Errorf("usage %+v, want %+v", rec.Usage, tc.want)
				}
				if rec.FirstContent == 0 || rec.End == 0 {
					t.Errorf("timings lost: first content %v, end %v", rec.FirstContent, rec.End)
				}
			})
		}
	}
}

// closingServer is an HTTP/1.1 server on 127.0.0.1 that answers the first
// `answer` requests of each connection with a complete event stream
// (Content-Length, no "Connection: close") and then, on reading the next
// request of that connection, closes it without a response byte (with a
// reset, RST, when reset is true), after holding it for wait (a target
// working on the request, e.g. in prefill, before it dies).
func closingServer(t *testing.T, answer int, reset bool, wait time.Duration) string {
	t.Helper()
	body := "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	return testutil.NewRawServer(t, func(conn *testutil.RawConn) {
		br := bufio.NewReader(conn)
		for n := 0; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			if n >= answer {
				time.Sleep(wait)
				if reset {
					_ = conn.Conn.(*net.TCPConn).SetLinger(0) // Close sends RST
				}
				return // close without a response byte
			}
			fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		}
	}).URL()
}

// TestStaleConnectionReason (issue 8, defect 8; issue 18): a request that
// fails on a reused keep-alive connection before any response byte (a pool
// race) is replayed on a new connection and ends ok, the replay on its
// record (once it would have ended transport_error/stale_connection); the
// same failure on a fresh connection is a failing target
// (connection_reset), never replayed, whether the server closes the
// connection (FIN) or resets it (RST).
func TestStaleConnectionReason(t *testing.T) {
	for _, reset := range []bool{false, true} {
		t.Run(fmt.Sprintf("reset=%v", reset), func(t *testing.T) {
			c, err := NewClient(ClientOptions{Timeouts: Timeouts{Total: 5 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			reused := closingServer(t, 1, reset, 0)
			if res, _ := probe(t, c, context.Background(), reused, Params{}); res.Outcome != ledger.OK {
				t.Fatalf("first request: %+v, want ok", res)
			}
			res, rec := probe(t, c, context.Background(), reused, Params{})
			if res.Outcome != ledger.OK || rec.Replays != 1 || rec.ReplayReason != ledger.ReasonStaleConnection {
				t.Errorf("second request on the reused connection: %+v (replays %d %q), want ok, replayed once (stale_connection)", res, rec.Replays, rec.ReplayReason)
			}

			fresh := closingServer(t, 0, reset, 0)
			res, rec = probe(t, c, context.Background(), fresh, Params{})
			if res.Outcome != ledger.TransportError || res.Reason != ledger.ReasonConnectionReset || rec.Replays != 0 {
				t.Errorf("fresh connection closed: %+v (replays %d), want transport_error/connection_reset, not replayed", res, rec.Replays)
			}
			if rec.Admitted() {
				t.Error("a connection closed before response headers counted as admitted")
			}
		})
	}
}

// TestStaleConnectionErrors: the errors that mean "the connection closed
// under the request" — EOF, a reset, a broken pipe (the request written
// into a closed connection), a closed connection, and net/http's "server
// closed idle connection" (errServerClosedIdle, unexported: matched by its
// text) — and nothing else.
func TestStaleConnectionErrors(t *testing.T) {
	op := func(o string, err error) error { return &net.OpError{Op: o, Net: "tcp", Err: err} }
	post := func(err error) error {
		return &url.Error{Op: "Post", URL: "http://127.0.0.1:1/v1/chat/completions", Err: err}
	}
	tests := []struct {
		name  string
		err   error
		stale bool
	}{
		{"EOF", post(io.EOF), true},
		{"reset", post(op("read", os.NewSyscallError("read", syscall.ECONNRESET))), true},
		{"broken pipe", post(op("write", os.NewSyscallError("write", syscall.EPIPE))), true},
		{"closed", post(op("read", net.ErrClosed)), true},
		{"server closed idle", post(errors.New("http: server closed idle connection")), true},
		{"refused", post(op("dial", os.NewSyscallError("connect", syscall.ECONNREFUSED))), false},
		{"partial response", post(io.ErrUnexpectedEOF), false},
		{"deadline", post(context.DeadlineExceeded), false},
		{"tls", post(x509.UnknownAuthorityError{}), false},
	}
	for _, tt := range tests {
		if got := staleConnection(tt.err); got != tt.stale {
			t.Errorf("%s: staleConnection(%v) = %v, want %v", tt.name, tt.err, got, tt.stale)
		}
	}
}

// TestBufferBoundCountsHeldMemory: the process-wide bound counts what a
// stream's reader holds, not the size of its event. A 600 KiB event sent
// as one line is held as the line it arrived in and again as its data
// (about 1.2 MiB): with a 1 MiB bound it ends stream_error/buffer_limit
// naming the bound, and nothing stays charged; within a 2 MiB bound the
// same stream is read to its end.
func TestBufferBoundCountsHeldMemory(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"delta":{"content":"`+strings.Repeat("x", 600<<10)+`"}}]}`+"\n\n")
		io.WriteString(w, `data: {"choices":[{"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	tests := []struct {
		name    string
		limit   int64
		outcome ledger.Outcome
		reason  ledger.Reason
	}{
		{"held twice, over the bound", 1 << 20, ledger.StreamError, ledger.ReasonBufferLimit},
		{"within the bound", 2 << 20, ledger.OK, ledger.ReasonStop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buffers := sse.NewBudget(tt.limit)
			c, err := NewClient(ClientOptions{MaxEventBytes: 1 << 20, Buffers: buffers, Timeouts: Timeouts{Total: 30 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			res, _ := probe(t, c, context.Background(), srv.URL, Params{})
			if res.Outcome != tt.outcome || res.Reason != tt.reason {
				t.Fatalf("result %+v, want %s/%s", res, tt.outcome, tt.reason)
			}
			if tt.outcome == ledger.StreamError && !strings.Contains(res.Err, "process-wide bound") {
				t.Errorf("error %q does not name the bound", res.Err)
			}
			if u := buffers.Used(); u != 0 {
				t.Errorf("%d bytes still charged after the stream ended", u)
			}
		})
	}
}

// TestBufferBoundAcrossStreams (issue 8, defect 7): streams each holding an
// unfinished ~1 MiB event share the process-wide bound on buffered event
// bytes: the first ones keep their events, every later one ends
// stream_error/buffer_limit as soon as it would pass the bound, and the
// bound is never passed. (The streams are started one after another so
// that which ones fit is certain.)
func TestBufferBoundAcrossStreams(t *testing.T) {
	const streams, limit = 12, 4 << 20
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+strings.Repeat("x", 1<<20)) // never finished
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	buffers := sse.NewBudget(limit)
	c, err := NewClient(ClientOptions{MaxEventBytes: 2 << 20, Buffers: buffers, Timeouts: Timeouts{Total: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := ledger.New(time.Now())
	results := make(chan ledger.Result, streams)
	holding, limited := 0, 0
	for range streams {
		go func() {
			rec := l.Plan(ledger.Meta{Target: "t"}, l.Now())
			results <- c.Do(ctx, Target{Base: srv.URL, Adapter: OpenAIChat{}}, Params{}, rec, l.Now, func() { l.MarkDispatched(rec) })
		}()
		// Wait until this stream holds its whole event or was limited.
		deadline := time.Now().Add(20 * time.Second)
	wait:
		for {
			select {
			case res := <-results:
				if res.Outcome != ledger.StreamError || res.Reason != ledger.ReasonBufferLimit || !strings.Contains(res.Err, "process-wide bound") {
					t.Fatalf("result %+v: want stream_error/buffer_limit naming the bound", res)
				}
				limited++
				break wait
			default:
			}
			if buffers.Used() > int64(holding)<<20+1<<20 {
				holding++
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("stream %d neither held its event nor was limited (used %d)", holding+limited+1, buffers.Used())
			}
			time.Sleep(time.Millisecond)
		}
		if u := buffers.Used(); u > limit {
			t.Fatalf("%d bytes buffered, over the %d bound", u, limit)
		}
	}
	if holding != 3 || limited != streams-3 {
		t.Errorf("%d streams hold their event, %d limited: want 3 (1 MiB each within 4 MiB) and %d", holding, limited, streams-3)
	}
	cancel()
	for range holding {
		if res := <-results; res.Reason == ledger.ReasonBufferLimit {
			t.Errorf("a stream within the bound was limited: %+v", res)
		}
	}
	if u := buffers.Used(); u != 0 {
		t.Errorf("%d bytes still charged after every stream ended", u)
	}
}
