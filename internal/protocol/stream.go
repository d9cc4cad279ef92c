package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol/sse"
)

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

// armTimers starts the request's bounds that run from dispatch: the
// total and first-content timers (kept on s, stopped by stopTimers) and
// the headers timer, returned for the caller to stop once headers came
// (nil when unset).
func (s *stream) armTimers(to Timeouts) (headers *time.Timer) {
	if to.Total > 0 {
		s.total = s.arm(ledger.ReasonTotal, to.Total)
		s.totalAt = s.now() + to.Total
	}
	if to.Headers > 0 {
		headers = s.arm(ledger.ReasonHeaders, to.Headers)
	}
	if to.FirstContent > 0 {
		s.firstContent = s.arm(ledger.ReasonFirstContent, to.FirstContent)
	}
	return headers
}

// stopTimers stops the total and first-content timers, when set.
func (s *stream) stopTimers() {
	if s.total != nil {
		s.total.Stop()
	}
	if s.firstContent != nil {
		s.firstContent.Stop()
	}
}

// refuse ends a response that is not a stream to read: a status outside
// 2xx (statusResult), a content encoding the client did not ask for (an
// encoded stream would be decoded in bursts and mistimed, so it is
// refused, by name), a body that is not an event stream
// (notEventStream). refused is false for a response to read.
func (s *stream) refuse(ctx context.Context, resp *http.Response) (res ledger.Result, refused bool) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return s.statusResult(resp), true
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(strings.TrimSpace(ce), "identity") {
		return s.fail(ledger.StreamError, ledger.ReasonContentType,
			"content encoding "+s.c.red.String(ce, maxLabel)+" though none was asked for (streams are timed as sent)"), true
	}
	if !isEventStream(resp.Header.Get("Content-Type")) {
		return s.notEventStream(ctx, resp), true
	}
	return ledger.Result{}, false
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
			return s.readError(ctx, err, dec)
		}
		if e.Error {
			// A non-standard `error:` field line (llama.cpp, early 2025):
			// an error object in any form ends the stream as one.
			return s.fail(ledger.StreamError, ledger.ReasonInBandError, s.c.inBandText(errorObject(e.Data)))
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
			return s.fail(ledger.StreamError, ledger.ReasonInBandError, s.c.inBandText(ev.Err))
		}
		if ev.Done {
			if s.empty() {
				return s.fail(ledger.StreamError, ledger.ReasonNoContent, noContentText)
			}
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
		cacheInvalid := rec.Usage.CacheInvalid || ev.Usage.CacheInvalid
		rec.Usage = *ev.Usage
		rec.Usage.Invalid = invalid
		rec.Usage.CacheInvalid = cacheInvalid
	}
	if ev.FinishReason != "" {
		rec.FinishReason = s.c.red.String(ev.FinishReason, maxFinishReason)
	}
	if ev.Model != "" && rec.Model == "" {
		rec.Model = s.c.red.String(ev.Model, maxModel)
	}
}

// noContentText is the error text of a stream that carried nothing.
const noContentText = "stream ended without content, reasoning, finish reason or usage"

// empty reports whether the stream has carried nothing a server sends for a
// request it served: no content, no reasoning, no finish reason and no usage
// (not even usage refused as impossible). Such a stream is no success,
// whatever ended it.
func (s *stream) empty() bool {
	r := s.rec
	return r.ContentEvents == 0 && r.ReasoningEvents == 0 && r.FinishReason == "" && !r.Usage.Known && !r.Usage.Invalid
}

func (s *stream) ok(doneAt time.Duration) ledger.Result {
	s.rec.End = doneAt
	res := ledger.Result{Outcome: ledger.OK, Reason: FinishReason(s.rec.FinishReason)}
	s.rec.BufferedByIntermediary = bufferedStream(s.rec)
	return res
}

// readError classifies a body read error before the terminal marker. Once
// the request's context has ended (a timer, the caller) the error is only
// its consequence: the cause decides.
func (s *stream) readError(ctx context.Context, err error, dec Decoder) ledger.Result {
	if ctx.Err() == nil {
		switch {
		case errors.Is(err, sse.ErrEventTooLarge):
			return s.fail(ledger.StreamError, ledger.ReasonEventTooLarge, "event over "+strconv.Itoa(s.maxEvent())+" bytes")
		case errors.Is(err, sse.ErrBudget):
			return s.fail(ledger.StreamError, ledger.ReasonBufferLimit,
				"buffered event bytes of all streams would pass the process-wide bound of "+strconv.FormatInt(s.c.buffers.Limit(), 10))
		case err == io.EOF && s.empty():
			return s.fail(ledger.StreamError, ledger.ReasonNoContent, noContentText)
		case err == io.EOF && s.rec.FinishReason != "" && dec.CanEnd():
			// The body ended cleanly after the server said why it stopped:
			// a missing terminal marker is the only fault, not a failure.
			return s.ok(s.now())
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
		se := s.errorBody(resp)
		if se != nil {
			msg += s.c.labels(se)
		}
		if note, ok := s.c.gateway(resp, se); ok {
			r, msg = ledger.ReasonGateway, msg+note
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
