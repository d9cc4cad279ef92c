package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol/sse"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// Bounds on what the Client keeps from a response.
const (
	maxFinishReason = ledger.MaxFinishReasonBytes // bytes of finish_reason kept in the record
	maxModel        = ledger.MaxModelBytes        // bytes of model name kept in the record
	maxLabel        = 48                          // bytes of an error type or code, or a content type, in error text
	maxDecodeErr    = 120                         // bytes of a decoder's error text
	maxErrorBody    = 64 << 10                    // bytes of a non-stream body read to find an error object
	postDoneGrace   = 2 * time.Second             // longest wait for the body's end after the terminal marker
)

// ClientOptions configure a Client. The zero value is usable: no timeouts,
// 1 MiB events, system TLS roots, HTTP/2 over TLS, proxy from the
// environment, no auth.
type ClientOptions struct {
	Timeouts      Timeouts
	MaxEventBytes int // largest SSE event accepted; 0 = sse.DefaultMaxEventBytes
	// Buffers is the process-wide bound on buffered event bytes, shared by
	// every Client of the process (sse.Budget); a stream that would pass it
	// ends stream_error/buffer_limit. nil: unbounded (each stream is still
	// bounded by MaxEventBytes).
	Buffers         *sse.Budget
	TLS             TLSOptions  // CA file, client certificate, skip-verify
	DisableHTTP2    bool        // speak HTTP/1.1 only (HTTP/2 is negotiated over TLS by default)
	NoProxy         bool        // ignore HTTP_PROXY/HTTPS_PROXY/NO_PROXY
	MaxConnsPerHost int         // 0 = unlimited
	Headers         http.Header // extra headers on every request (values never logged)
	Auth            AuthOptions // where the API key comes from and how it is sent
	Logger          *slog.Logger
	// Redactor knows secret values besides the client's own: e.g. header
	// values read from the environment (header_env). The Client adds its
	// API key and the values of Headers whose names look secret
	// (sanitize.SecretName), and cleans every server-supplied string it
	// keeps with the result (see Redactor). nil: none besides its own.
	Redactor *sanitize.Redactor
}

// Target is one endpoint: a base URL (e.g. "http://127.0.0.1:8000/v1"),
// the API spoken there, and headers for it alone.
type Target struct {
	Base    string
	Adapter Adapter
	Headers http.Header
	// Hook, when set, is called with each built request just before it is
	// sent (tracing: start a span, inject traceparent) and returns the
	// request's context and a func called with its outcome.
	Hook func(ctx context.Context, req *http.Request) (context.Context, func(ledger.Outcome, ledger.Reason))
}

// Client performs streaming requests and times them. It is safe for
// concurrent use; one Client serves many concurrent streams.
type Client struct {
	rt        *http.Transport
	timeouts  Timeouts
	maxEvent  int
	headers   http.Header
	auth      authHeaders
	warnings  []string
	readers   sync.Pool     // *sse.Reader, reused across streams
	doneGrace time.Duration // postDoneGrace (tests shorten it)
	red       *sanitize.Redactor
	buffers   *sse.Budget
}

// NewClient builds a Client: it resolves the API key (from the environment
// variable or file named in opts.Auth; the value is never logged), loads
// TLS material and sizes the transport. Warnings (e.g. skip-verify) are
// logged at WARN on opts.Logger (slog.Default when nil) and kept for
// Warnings.
func NewClient(opts ClientOptions) (*Client, error) {
	auth, err := newAuthHeaders(opts.Auth)
	if err != nil {
		return nil, fmt.Errorf("protocol client: %w", err)
	}
	rt, warnings, err := newTransport(opts)
	if err != nil {
		return nil, fmt.Errorf("protocol client: %w", err)
	}
	for _, d := range []time.Duration{opts.Timeouts.Connect, opts.Timeouts.Headers, opts.Timeouts.FirstContent, opts.Timeouts.Idle, opts.Timeouts.Total} {
		if d < 0 {
			return nil, errors.New("protocol client: timeouts must not be negative")
		}
	}
	if opts.MaxEventBytes < 0 {
		return nil, errors.New("protocol client: max event bytes must not be negative")
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	for _, w := range warnings {
		log.Warn(w)
	}
	c := &Client{
		rt: rt, timeouts: opts.Timeouts, maxEvent: opts.MaxEventBytes,
		headers: make(http.Header, len(opts.Headers)), auth: auth, warnings: warnings,
		doneGrace: postDoneGrace, red: opts.Redactor, buffers: opts.Buffers,
	}
	var secrets []string
	if auth.key != nil {
		secrets = append(secrets, auth.key.v)
	}
	for k, v := range opts.Headers {
		c.headers[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
		if sanitize.SecretName(k) {
			secrets = append(secrets, v...)
		}
	}
	c.red = c.red.With(secrets...)
	c.readers.New = func() any { return sse.NewReader(nil, sse.Options{}) }
	return c, nil
}

// Redactor returns the Redactor the Client cleans server-supplied strings
// with: it knows the Client's API key (and its Bearer form), the values of
// its secret-looking extra headers and those of ClientOptions.Redactor.
// Callers use it for what they read from the same target themselves (e.g.
// a response header polled for identity).
func (c *Client) Redactor() *sanitize.Redactor { return c.red }

// Warnings returns the configuration warnings NewClient logged.
func (c *Client) Warnings() []string { return append([]string(nil), c.warnings...) }

// CloseIdleConnections closes the transport's idle connections.
func (c *Client) CloseIdleConnections() { c.rt.CloseIdleConnections() }

// Exec returns an executor that sends requests to t with the Params params
// builds for each record (e.g. from its class), stamping with now (the
// ledger's clock). Its type is dispatch.Exec's, so the dispatcher takes it
// as it is; protocol does not import dispatch (the data flows one way).
func (c *Client) Exec(t Target, params func(*ledger.Record) Params, now func() time.Duration) func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
	return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		return c.Do(ctx, t, params(rec), rec, now, dispatched)
	}
}

// Do performs one streaming request to t and stamps rec: Headers, FirstByte,
// FirstReasoning, FirstContent, LastContent, End, ChunkGaps, event counts,
// Status, RetryAfter, Usage, FinishReason and Model, every time from now().
// It calls dispatched exactly once, immediately before the request goes to
// the transport (also when the request cannot be built). It never finishes
// rec: the returned Result says how the request ended.
func (c *Client) Do(ctx context.Context, t Target, p Params, rec *ledger.Record, now func() time.Duration, dispatched func()) (res ledger.Result) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// Whether the request went out on a reused idle connection: a failure
	// there before any response byte is a keep-alive race (the server
	// closed the connection while it sat idle), not a failing target.
	var reused atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { reused.Store(ci.Reused) }})
	req, err := t.Adapter.NewRequest(ctx, t.Base, p)
	if err != nil {
		if dispatched != nil {
			dispatched()
		}
		rec.End = now()
		return ledger.Result{Outcome: ledger.TransportError, Reason: ledger.ReasonTransportOther, Err: "cannot build the request (check base URL and api)"}
	}
	c.setHeaders(req.Header, t)
	if t.Hook != nil {
		hctx, done := t.Hook(ctx, req)
		req = req.WithContext(hctx)
		if sc := trace.SpanContextFromContext(hctx); sc.HasTraceID() {
			rec.TraceID = sc.TraceID().String()
		}
		defer func() { done(res.Outcome, res.Reason) }()
	}

	to := c.timeouts
	s := stream{c: c, rec: rec, now: now, cancel: cancel}
	if to.Total > 0 {
		s.total = s.arm(ledger.ReasonTotal, to.Total)
		s.totalAt = now() + to.Total
		defer s.total.Stop()
	}
	var headersTimer *time.Timer
	if to.Headers > 0 {
		headersTimer = s.arm(ledger.ReasonHeaders, to.Headers)
	}
	if to.FirstContent > 0 {
		s.firstContent = s.arm(ledger.ReasonFirstContent, to.FirstContent)
		defer s.firstContent.Stop()
	}
	// Stamped as late as possible: what the generator did before sending
	// (building the request, arming the timers) counts as its lag.
	if dispatched != nil {
		dispatched()
	}
	resp, err := c.rt.RoundTrip(req)
	if headersTimer != nil {
		headersTimer.Stop()
	}
	if err != nil {
		rec.End = now()
		if reused.Load() && ctx.Err() == nil && staleConnection(err) {
			return ledger.Result{Outcome: ledger.TransportError, Reason: ledger.ReasonStaleConnection,
				Err: "connection closed before response headers on a reused keep-alive connection"}
		}
		return classifyError(ctx, err, false)
	}
	rec.Headers = now()
	defer resp.Body.Close()
	// Every read of the body ends when the request does: a body that is not
	// tied to the request's context (the raw connection Go hands back with
	// a 101) is closed when a timeout, the drain or an interrupt ends ctx.
	defer context.AfterFunc(ctx, func() { _ = resp.Body.Close() })()
	rec.Status = resp.StatusCode
	if to.Idle > 0 {
		s.idle = s.startIdle(to.Idle)
		defer s.idle.stop()
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return s.statusResult(resp)
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(strings.TrimSpace(ce), "identity") {
		// The client asks for no encoding: an encoded stream would be
		// decoded in bursts and mistimed, so it is refused, by name.
		return s.fail(ledger.StreamError, ledger.ReasonContentType,
			"content encoding "+s.c.red.String(ce, maxLabel)+" though none was asked for (streams are timed as sent)")
	}
	if !isEventStream(resp.Header.Get("Content-Type")) {
		return s.notEventStream(ctx, resp)
	}
	return s.read(ctx, resp.Body, t.Adapter.NewDecoder())
}

// setHeaders adds, in order of precedence (later wins): the client's extra
// headers, the target's, then the auth headers.
func (c *Client) setHeaders(h http.Header, t Target) {
	for k, v := range c.headers {
		h[k] = v
	}
	for k, v := range t.Headers {
		h[http.CanonicalHeaderKey(k)] = v
	}
	c.auth.apply(h, t.Adapter)
}

// stream is the state of one request being read.
type stream struct {
	c            *Client
	rec          *ledger.Record
	now          func() time.Duration
	cancel       context.CancelCauseFunc
	idle         *idleBound
	firstContent *time.Timer
	total        *time.Timer   // the total bound's timer, when set
	totalAt      time.Duration // when total fires
}

// arm starts a timer that cancels the request with a timeout cause.
func (s *stream) arm(r ledger.Reason, d time.Duration) *time.Timer {
	cause := &timeoutError{reason: r, limit: d}
	cancel := s.cancel
	return time.AfterFunc(d, func() { cancel(cause) })
}

// idleBound enforces the idle timeout without touching a timer on every
// read: a read only stamps its time; the timer, when it fires, re-arms for
// what is left of the bound or, when the bound has passed, cancels the
// request.
type idleBound struct {
	t       *time.Timer
	last    atomic.Int64 // ledger offset of the last read that returned bytes
	stopped atomic.Bool
}

func (s *stream) startIdle(limit time.Duration) *idleBound {
	b := &idleBound{}
	b.last.Store(int64(s.now()))
	cause := &timeoutError{reason: ledger.ReasonIdle, limit: limit}
	now, cancel := s.now, s.cancel
	// Created far off and then reset, so that b.t is set before the
	// function can run.
	b.t = time.AfterFunc(time.Hour, func() {
		if b.stopped.Load() {
			return
		}
		if left := limit - (now() - time.Duration(b.last.Load())); left > 0 {
			b.t.Reset(left)
			return
		}
		cancel(cause)
	})
	b.t.Reset(limit)
	return b
}

func (b *idleBound) stop() {
	b.stopped.Store(true)
	b.t.Stop()
}

// activity is called for every read that returned bytes: one clock read
// serves the first-byte stamp and the idle bound.
func (s *stream) activity(int) {
	if s.rec.FirstByte != 0 && s.idle == nil {
		return
	}
	t := s.now()
	if s.rec.FirstByte == 0 {
		s.rec.FirstByte = t
	}
	if s.idle != nil {
		s.idle.last.Store(int64(t))
	}
}

func (s *stream) fail(o ledger.Outcome, r ledger.Reason, msg string) ledger.Result {
	return s.failWith(ledger.Result{Outcome: o, Reason: r, Err: msg})
}

// failWith stamps the end of a request that failed as res says.
func (s *stream) failWith(res ledger.Result) ledger.Result {
	s.rec.End = s.now()
	return res
}

// read consumes an event stream until the terminal marker and the end of
// the body.
func (s *stream) read(ctx context.Context, body io.Reader, dec Decoder) ledger.Result {
	rd := s.c.readers.Get().(*sse.Reader)
	rd.Reset(body, sse.Options{MaxEventBytes: s.c.maxEvent, Activity: s.activity, Budget: s.c.buffers})
	defer func() {
		rd.Reset(nil, sse.Options{})
		s.c.readers.Put(rd)
	}()
	var doneAt time.Duration
	for {
		e, err := rd.Next()
		if err != nil {
			if doneAt != 0 {
				// Complete: whatever ends the body after the terminal
				// marker (EOF, a reset, a timer) does not undo it.
				return s.ok(doneAt)
			}
			return s.readError(ctx, err)
		}
		if doneAt != 0 {
			if len(bytes.TrimSpace(e.Data)) > 0 {
				return s.fail(ledger.StreamError, ledger.ReasonDataAfterDone, "data after the terminal marker")
			}
			continue
		}
		ev, err := dec.Decode(e.Name, e.Data)
		if err != nil {
			reason, ok := ReasonOf(err)
			if !ok || !ledger.Valid(ledger.StreamError, reason) {
				reason = ledger.ReasonMalformed
			}
			return s.fail(ledger.StreamError, reason, "stream "+string(reason)+": "+s.c.red.String(err.Error(), maxDecodeErr))
		}
		s.apply(ev)
		if ev.Err != nil {
			return s.fail(ledger.StreamError, ledger.ReasonInBandError, "in-band error"+s.c.labels(ev.Err))
		}
		if ev.Done {
			doneAt = s.now()
			if s.firstContent != nil {
				s.firstContent.Stop()
			}
			// Read on to the end of the body (to see data after the marker
			// and to reuse the connection), but not for ever. What ends
			// the body from here on does not change the outcome, so the
			// total timer is reused (one timer less per request).
			switch {
			case s.total == nil:
				defer s.arm(ledger.ReasonTotal, s.c.doneGrace).Stop()
			case s.totalAt-doneAt > s.c.doneGrace:
				s.total.Reset(s.c.doneGrace)
			}
		}
	}
}

// MaxChunkGaps bounds the inter-chunk gaps (and per-chunk token counts) kept
// per request, so that a server streaming without end cannot grow a record
// without bound; past it, events are still counted and the record is marked
// ChunksTruncated.
const MaxChunkGaps = 1 << 14

// apply stamps what one event carried: one clock read per event that
// carried reasoning or content, none for the others. Server strings (finish
// reason, model) are cleaned by the one rule (sanitize) with the Client's
// Redactor.
func (s *stream) apply(ev Event) {
	rec := s.rec
	var t time.Duration
	if ev.Reasoning || ev.Content {
		t = s.now()
	}
	if ev.Reasoning {
		if rec.FirstReasoning == 0 {
			rec.FirstReasoning = t
		}
		rec.ReasoningEvents++
	}
	if ev.Content {
		if rec.FirstContent == 0 {
			rec.FirstContent = t
			if s.firstContent != nil {
				s.firstContent.Stop()
			}
		} else if len(rec.ChunkGaps) < MaxChunkGaps {
			rec.ChunkGaps = append(rec.ChunkGaps, t-rec.LastContent)
		} else {
			rec.ChunksTruncated = true // memory per stream stays bounded
		}
		rec.LastContent = t
		rec.ContentEvents++
		// Per-chunk token counts (from usage deltas) are kept only once a
		// server gives one; earlier chunks are padded as unknown (0).
		if (ev.Tokens > 0 || rec.ChunkTokens != nil) && rec.ContentEvents <= MaxChunkGaps+1 {
			for len(rec.ChunkTokens) < rec.ContentEvents-1 {
				rec.ChunkTokens = append(rec.ChunkTokens, 0)
			}
			rec.ChunkTokens = append(rec.ChunkTokens, ev.Tokens)
		}
	}
	if ev.Usage != nil {
		// The decoder checked the counts (CheckUsage); an impossible report
		// anywhere in the stream stays flagged.
		invalid := rec.Usage.Invalid || ev.Usage.Invalid
		rec.Usage = *ev.Usage
		rec.Usage.Invalid = invalid
	}
	if ev.FinishReason != "" {
		rec.FinishReason = s.c.red.String(ev.FinishReason, maxFinishReason)
	}
	if ev.Model != "" && rec.Model == "" {
		rec.Model = s.c.red.String(ev.Model, maxModel)
	}
}

func (s *stream) ok(doneAt time.Duration) ledger.Result {
	s.rec.End = doneAt
	return ledger.Result{Outcome: ledger.OK, Reason: FinishReason(s.rec.FinishReason)}
}

// readError classifies a body read error before the terminal marker. Once
// the request's context has ended (a timer, the caller) the error is only
// its consequence: the cause decides.
func (s *stream) readError(ctx context.Context, err error) ledger.Result {
	if ctx.Err() == nil {
		switch {
		case errors.Is(err, sse.ErrEventTooLarge):
			return s.fail(ledger.StreamError, ledger.ReasonEventTooLarge, "event over "+strconv.Itoa(s.maxEvent())+" bytes")
		case errors.Is(err, sse.ErrBudget):
			return s.fail(ledger.StreamError, ledger.ReasonBufferLimit,
				"buffered event bytes of all streams would pass the process-wide bound of "+strconv.FormatInt(s.c.buffers.Limit(), 10))
		case err == io.EOF, errors.Is(err, sse.ErrIncomplete):
			return s.fail(ledger.StreamError, ledger.ReasonTruncated, "stream ended without the terminal marker")
		}
	}
	return s.failWith(classifyError(ctx, err, true))
}

func (s *stream) maxEvent() int {
	if s.c.maxEvent > 0 {
		return s.c.maxEvent
	}
	return sse.DefaultMaxEventBytes
}

// statusResult classifies a non-2xx response, reading a bounded part of its
// body for the error's type and code.
func (s *stream) statusResult(resp *http.Response) ledger.Result {
	o, r := ClassifyStatus(resp.StatusCode)
	if o == ledger.Rejected {
		s.rec.RetryAfter, s.rec.RetryAfterClamped = ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	msg := "status " + strconv.Itoa(resp.StatusCode)
	// A 1xx final status has no body to read (after a 101 the "body" is the
	// raw connection): the status is the whole answer.
	if resp.StatusCode >= 200 {
		if se := s.errorBody(resp); se != nil {
			msg += s.c.labels(se)
		}
	}
	if s.rec.RetryAfter > 0 {
		msg += ", retry after " + s.rec.RetryAfter.String()
		if s.rec.RetryAfterClamped {
			msg += " (clamped: the server asked for longer)"
		}
	}
	return s.fail(o, r, msg)
}

// notEventStream classifies a 2xx that is not text/event-stream: a JSON
// error object is an error body, anything else a content-type error.
func (s *stream) notEventStream(ctx context.Context, resp *http.Response) ledger.Result {
	if se := s.errorBody(resp); se != nil {
		return s.fail(ledger.HTTPError, ledger.ReasonErrorBody, "status "+strconv.Itoa(resp.StatusCode)+" with an error body"+s.c.labels(se))
	}
	if ctx.Err() != nil {
		return s.failWith(classifyError(ctx, ctx.Err(), true))
	}
	ct := s.c.red.String(resp.Header.Get("Content-Type"), maxLabel)
	if ct == "" {
		ct = "none"
	}
	return s.fail(ledger.StreamError, ledger.ReasonContentType, "content type "+ct+", not text/event-stream")
}

// errorBody reads up to maxErrorBody bytes of a body and returns the error
// object it holds ({"error": …} at the top level), if any.
func (s *stream) errorBody(resp *http.Response) *ServerError {
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(&activityReader{r: io.LimitReader(resp.Body, maxErrorBody), s: s})
	b := bytes.TrimSpace(buf.Bytes())
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	var obj struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &obj) != nil {
		return nil
	}
	return jsonErrorMember(obj.Error)
}

// activityReader stamps the first byte and feeds the idle timer for bodies
// read without the SSE reader.
type activityReader struct {
	r io.Reader
	s *stream
}

func (a *activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.s.activity(n)
	}
	return n, err
}

// isEventStream reports whether a Content-Type is text/event-stream
// (parameters allowed, case-insensitive).
func isEventStream(ct string) bool {
	const want = "text/event-stream"
	for len(ct) > 0 && (ct[0] == ' ' || ct[0] == '\t') {
		ct = ct[1:]
	}
	if len(ct) < len(want) || !strings.EqualFold(ct[:len(want)], want) {
		return false
	}
	rest := ct[len(want):]
	return rest == "" || rest[0] == ';' || rest[0] == ' ' || rest[0] == '\t'
}

// labels formats a server error's type and code for error text, cleaned
// by the one rule.
func (c *Client) labels(se *ServerError) string {
	t, code := c.red.String(se.Type, maxLabel), c.red.String(se.Code, maxLabel)
	switch {
	case t != "" && code != "":
		return " (" + t + "/" + code + ")"
	case t != "":
		return " (" + t + ")"
	case code != "":
		return " (" + code + ")"
	}
	return ""
}
