package protocol

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"sync"
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
	maxErrorText    = ledger.MaxErrorBytes        // bytes of error text a record keeps
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
	TLS             TLSOptions // CA file, client certificate, skip-verify
	DisableHTTP2    bool       // speak HTTP/1.1 only (HTTP/2 is negotiated over TLS by default)
	NoProxy         bool       // ignore HTTP_PROXY/HTTPS_PROXY/NO_PROXY
	MaxConnsPerHost int        // 0 = unlimited
	// IdleConnTimeout is how long an idle keep-alive connection is kept for
	// reuse; 0 = DefaultIdleConnTimeout. A server's Keep-Alive: timeout=N
	// shortens it for that server's connections (see keepalive.go).
	IdleConnTimeout time.Duration
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
	// URL is the base URL, parsed once (wiring sets it from the
	// configuration's url). Base is the same as text, for a Target a Go
	// caller writes by hand: it is parsed on each request, and only when
	// URL is unset.
	URL     BaseURL
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
	rt        *router
	timeouts  Timeouts
	maxEvent  int
	headers   http.Header
	auth      authHeaders
	warnings  []string
	readers   sync.Pool     // *sse.Reader, reused across streams
	doneGrace time.Duration // postDoneGrace (tests shorten it)
	red       *sanitize.Redactor
	buffers   *sse.Budget
	noPhases  bool // the phases are not traced (the benchmark's other side)
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
	rt, warnings, err := newRouter(opts)
	if err != nil {
		return nil, fmt.Errorf("protocol client: %w", err)
	}
	for _, d := range []time.Duration{opts.IdleConnTimeout, opts.Timeouts.Connect, opts.Timeouts.Headers, opts.Timeouts.FirstContent, opts.Timeouts.Idle, opts.Timeouts.Total} {
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
	var check *checkDecoder
	if p.Check != nil {
		// Runs last: the verdict sees how the request ended.
		defer func() { c.judge(p, rec, res, check) }()
	}
	// What the transport did with the connection, for telling a keep-alive
	// race from a failing target (see keepAliveRace); which connections
	// the request took: replays, and the connection whose idle time a
	// Keep-Alive header bounds (replay.go); and the attempt's phases
	// (phases.go).
	var conn connTrace
	use := connUse{now: now}
	var ph *phaseTrace
	if !c.noPhases {
		ph = &phaseTrace{now: now}
	}
	ctx = httptrace.WithClientTrace(ctx, attemptTrace(&conn, &use, ph))
	req, err := c.newRequest(ctx, t, p)
	if err != nil {
		if dispatched != nil {
			dispatched()
		}
		rec.End = now()
		return ledger.Result{Outcome: ledger.TransportError, Reason: ledger.ReasonTransportOther, Err: "cannot build the request (check base URL and api)"}
	}
	use.gate(req)
	if ph != nil {
		ph.overTLS = req.URL.Scheme == "https"
	}
	if t.Hook != nil {
		hctx, done := t.Hook(ctx, req)
		req = req.WithContext(hctx)
		if sc := trace.SpanContextFromContext(hctx); sc.HasTraceID() {
			rec.TraceID = sc.TraceID().String()
		}
		defer func() { done(res.Outcome, res.Reason) }()
	}

	// Stamped before the timers are armed: every limit runs from dispatch
	// (Timeouts), so arming them first would let one fire early by the
	// arming's time, which a starved host stretches. Building the request
	// still counts as the generator's lag.
	if dispatched != nil {
		dispatched()
	}
	to := c.timeouts
	s := stream{c: c, rec: rec, now: now, cancel: cancel}
	headersTimer := s.armTimers(to)
	defer s.stopTimers()
	resp, err := c.rt.RoundTrip(req)
	if headersTimer != nil {
		headersTimer.Stop()
	}
	use.stamp(rec)
	if ph != nil {
		ph.stamp(rec, resp)
		defer ph.finish(rec)
	}
	if err != nil {
		rec.End = now()
		return c.roundTripError(ctx, err, &conn)
	}
	rec.Headers = now()
	rec.Cert = certFacts(resp.TLS)
	if ka, ok := parseKeepAlive(resp.Header.Get("Keep-Alive")); ok && resp.ProtoMajor == 1 {
		// Runs after the body is closed (defers run last first): the
		// connection is idle from then.
		defer use.expireIdle(ka)
	}
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
	if r, refused := s.refuse(ctx, resp); refused {
		return r
	}
	// The server's own timings (llama.cpp) are read beside the adapter.
	dec := t.Adapter.NewDecoder()
	if p.Check != nil {
		check = &checkDecoder{Decoder: dec, api: t.Adapter.Name()}
		dec = check
	}
	return s.read(ctx, resp.Body, &timingsDecoder{Decoder: dec, rec: rec})
}

// newRequest builds the request of p to t, with its headers.
func (c *Client) newRequest(ctx context.Context, t Target, p Params) (*http.Request, error) {
	base, err := t.BaseURL()
	if err != nil {
		return nil, err
	}
	req, err := t.Adapter.Request(ctx, base, p)
	if err != nil {
		return nil, err
	}
	c.setHeaders(req.Header, t)
	return req, nil
}

// roundTripError is how a request that got no response headers ended:
// a keep-alive race (every replay met a closed connection, or this one
// did on a reused connection, conn says) is stale_connection, not the
// target's failure; a path error (DNS, TLS, a proxy) names its cause;
// anything else is classified by classifyError.
func (c *Client) roundTripError(ctx context.Context, err error, conn *connTrace) ledger.Result {
	var nr *notReplayed
	if ctx.Err() == nil && errors.As(err, &nr) {
		return ledger.Result{Outcome: ledger.TransportError, Reason: ledger.ReasonStaleConnection,
			Err: "reused keep-alive connections closed before response headers on every replay"}
	}
	if ctx.Err() == nil && conn.keepAliveRace() && staleConnection(err) {
		return ledger.Result{Outcome: ledger.TransportError, Reason: ledger.ReasonStaleConnection,
			Err: "connection closed before response headers on a reused keep-alive connection"}
	}
	if r, ok := c.pathError(err); ok && ctx.Err() == nil {
		return r
	}
	return classifyError(ctx, err, false)
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
