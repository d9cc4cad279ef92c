package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxEventBytes is the event size bound used when Options leaves it zero.
const DefaultMaxEventBytes = 1 << 20

// lineSlack is how much longer than the event bound a line may be: room for
// a field name, the colon and the optional space.
const lineSlack = 64

// bufSize is the read buffer size per stream. The HTTP connection's own
// reader (4 KiB) buffers the socket, so a small buffer here costs copies,
// never system calls; a stream event is a few hundred bytes, and a longer
// line is gathered in the line buffer. 1 KiB instead of 4 KiB saves 3 KiB
// per stream in flight (30 MB at 10,000 streams).
const bufSize = 1024

// ErrEventTooLarge is returned when an event's data, or any line that is not
// a comment, exceeds the bound. The Reader stays in error afterwards.
var ErrEventTooLarge = errors.New("sse: event too large")

// ErrIncomplete is returned instead of io.EOF when the stream ended inside
// an event (data or fields after the last blank line, or a final line with
// no line end). The standard says such an event is discarded, and it is: the
// distinct error only lets callers tell a cut stream from a clean end.
var ErrIncomplete = errors.New("sse: stream ended inside an event")

// Options configure a Reader.
type Options struct {
	// MaxEventBytes bounds the joined data of one event (and, plus a small
	// slack for the field name, the length of any non-comment line).
	// Zero means DefaultMaxEventBytes.
	MaxEventBytes int
	// Activity, when set, is called with the byte count of every read from
	// the underlying reader that returned data, comments and keep-alives
	// included. It runs on the goroutine calling Next.
	Activity func(n int)
	// Budget, when set, is the process-wide bound on buffered event bytes
	// this Reader charges past FreeBytes (see Budget); buffering past it
	// fails with ErrBudget. nil: only MaxEventBytes bounds the Reader.
	Budget *Budget
}

// Event is one dispatched server-sent event. Data (and the Reader's
// buffers behind it) is valid only until the next call to Next.
type Event struct {
	// Name is the event type: the last `event:` field of the event, or ""
	// when none was given (the standard's default type "message").
	Name string
	// Data is the event's data lines joined with \n; for an Error event,
	// its error lines instead.
	Data []byte
	// Error says the event carried a non-standard `error:` field (llama.cpp's
	// server sent `error: {…}` on a failed request in early 2025, then
	// `data: [DONE]`). The standard ignores unknown fields, which would hide
	// the failure: the Reader surfaces this one. Data then holds the error
	// lines' values joined with \n, and the event's data lines are dropped.
	Error bool
}

// Reader reads events from a text/event-stream. It is not safe for
// concurrent use.
type Reader struct {
	src      io.Reader
	max      int
	maxLine  int
	activity func(int)

	buf     []byte // read buffer
	r, w    int    // unread window of buf
	srcErr  error  // sticky error from src
	err     error  // sticky error returned by Next
	started bool   // the optional BOM has been checked
	skipLF  bool   // the last line ended in \r: a leading \n is its tail

	line      []byte // a line that spans reads
	spanning  bool   // line holds the start of an unterminated line
	inComment bool   // skipping an unterminated comment line

	data    []byte // data buffer of the event being built
	hasData bool   // a data field (or an error field) was seen in this event
	isError bool   // an error field was seen in this event: data holds error values
	name    []byte // event type buffer
	pending bool   // any field was seen since the last dispatch
	lastID  []byte // last event ID buffer
	curName string // interned Name of the last dispatched event

	budget *Budget
	held   int64 // bytes charged to budget: what line, data, name and lastID hold, rounded up
}

// What Reset keeps of each buffer for the next stream: together no more
// than FreeBytes, so that a pooled Reader holds nothing its next stream
// would have to charge.
const (
	keepLine  = 4 << 10
	keepData  = 8 << 10
	keepSmall = 2 << 10 // name and lastID each
)

// NewReader returns a Reader over src.
func NewReader(src io.Reader, opts Options) *Reader {
	r := &Reader{buf: make([]byte, bufSize)}
	r.Reset(src, opts)
	return r
}

// Reset makes r read a new stream from src, keeping its buffers (for
// pooling). The last event ID is cleared, and what the previous stream
// charged to its Budget is released.
func (r *Reader) Reset(src io.Reader, opts Options) {
	r.budget.release(r.held)
	max := opts.MaxEventBytes
	if max <= 0 {
		max = DefaultMaxEventBytes
	}
	buf, line, data, name, lastID, cur := r.buf, r.line[:0], r.data[:0], r.name[:0], r.lastID[:0], r.curName
	if buf == nil {
		buf = make([]byte, bufSize)
	}
	// Drop buffers that grew beyond what a fresh stream needs by default:
	// what is kept stays within FreeBytes, and is charged to nobody.
	if cap(line) > keepLine {
		line = nil
	}
	if cap(data) > keepData {
		data = nil
	}
	if cap(name) > keepSmall {
		name = nil
	}
	if cap(lastID) > keepSmall {
		lastID = nil
	}
	*r = Reader{
		src: src, max: max, maxLine: max + lineSlack, activity: opts.Activity,
		buf: buf, line: line, data: data, name: name, lastID: lastID, curName: cur,
		budget: opts.Budget,
	}
}

// LastEventID returns the last event ID the stream set (the `id:` field).
func (r *Reader) LastEventID() string { return string(r.lastID) }

// MemoryBytes reports the capacity of the Reader's buffers: the memory it
// holds for its stream. It stays below about 4×MaxEventBytes plus a small
// constant whatever the stream contains. With a Budget, all of it but the
// fixed read buffer is charged once it passes FreeBytes.
func (r *Reader) MemoryBytes() int {
	return cap(r.buf) + r.heldBytes()
}

// Next returns the next event. At the end of the stream it returns io.EOF,
// or ErrIncomplete when the stream ended inside an event (which is
// discarded, as the standard says). Other errors are the source's read
// errors or ErrEventTooLarge; every error is sticky.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	if r.hasData {
		// The previous call dispatched an event: its data is released now.
		r.resetEvent()
	}
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && (r.pending || (r.spanning && !r.inComment)) {
				err = ErrIncomplete
			}
			r.err = err
			return Event{}, err
		}
		if len(line) == 0 {
			if !r.hasData {
				r.resetEvent()
				continue
			}
			return Event{Name: r.internName(), Data: r.data[:len(r.data)-1], Error: r.isError}, nil
		}
		if line[0] == ':' {
			continue
		}
		if err := r.field(line); err != nil {
			r.err = err
			return Event{}, err
		}
	}
}

func (r *Reader) resetEvent() {
	r.data = r.data[:0]
	r.name = r.name[:0]
	r.hasData = false
	r.isError = false
	r.pending = false
}

// internName returns the event's type without allocating when it repeats.
func (r *Reader) internName() string {
	if string(r.name) != r.curName { // no allocation for the comparison
		r.curName = string(r.name)
	}
	return r.curName
}

// field processes one non-empty, non-comment line.
func (r *Reader) field(line []byte) error {
	r.pending = true
	var name, value []byte
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	} else {
		name = line
	}
	switch string(name) {
	case "error":
		// Not in the standard (see Event.Error): the event becomes an
		// error event, holding only error values.
		if !r.isError {
			r.isError = true
			r.data = r.data[:0]
		}
		return r.appendData(value)
	case "data":
		if r.isError {
			return nil // an error event's data lines are dropped
		}
		return r.appendData(value)
	case "event":
		r.name = r.name[:0]
		return r.appendTo(&r.name, r.maxLine, value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.lastID = r.lastID[:0]
			return r.appendTo(&r.lastID, r.maxLine, value)
		}
	default:
		// "retry" (reconnection time) is meaningless for a probe that never
		// reconnects; other unknown fields are ignored as the standard says.
	}
	return nil
}

// appendData adds one data (or error) value to the event, within the bound.
func (r *Reader) appendData(value []byte) error {
	if len(r.data)+len(value) > r.max {
		return fmt.Errorf("%w: data over %d bytes", ErrEventTooLarge, r.max)
	}
	if err := r.appendTo(&r.data, r.max+1, value, newline); err != nil {
		return err
	}
	r.hasData = true
	return nil
}

// readLine returns the next line without its line end. The slice is valid
// until the next call. A comment line that spans reads is returned as ":".
func (r *Reader) readLine() ([]byte, error) {
	if !r.started {
		if err := r.skipBOM(); err != nil {
			return nil, err
		}
	}
	for {
		if r.skipLF && r.r < r.w {
			if r.buf[r.r] == '\n' {
				r.r++
			}
			r.skipLF = false
		}
		win := r.buf[r.r:r.w]
		if i := indexEOL(win); i >= 0 {
			r.r += i + 1
			if win[i] == '\r' {
				r.skipLF = true
			}
			return r.finishLine(win[:i])
		}
		if len(win) > 0 {
			if err := r.spanLine(win); err != nil {
				return nil, err
			}
			r.r = r.w
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// finishLine completes a line whose end was found: tail is its last part.
func (r *Reader) finishLine(tail []byte) ([]byte, error) {
	if !r.spanning {
		if len(tail) > r.maxLine && tail[0] != ':' {
			return nil, fmt.Errorf("%w: line over %d bytes", ErrEventTooLarge, r.maxLine)
		}
		return tail, nil
	}
	if r.inComment {
		r.spanning, r.inComment = false, false
		return commentLine, nil
	}
	if err := r.spanLine(tail); err != nil {
		return nil, err
	}
	r.spanning = false
	line := r.line
	r.line = r.line[:0]
	return line, nil
}

// spanLine keeps part of a line that has no line end yet.
func (r *Reader) spanLine(part []byte) error {
	if !r.spanning {
		r.spanning = true
		r.line = r.line[:0]
		if part[0] == ':' {
			r.inComment = true
		}
	}
	if r.inComment {
		return nil
	}
	if len(r.line)+len(part) > r.maxLine {
		return fmt.Errorf("%w: line over %d bytes", ErrEventTooLarge, r.maxLine)
	}
	return r.appendTo(&r.line, r.maxLine, part)
}

// fill reads more bytes into the (empty) window.
func (r *Reader) fill() error {
	if r.srcErr != nil {
		return r.srcErr
	}
	r.r, r.w = 0, 0
	for empty := 0; ; empty++ {
		n, err := r.src.Read(r.buf)
		if n > 0 {
			r.w = n
			if r.activity != nil {
				r.activity(n)
			}
		}
		if err != nil {
			r.srcErr = err
			if n > 0 {
				return nil
			}
			return err
		}
		if n > 0 {
			return nil
		}
		if empty > 100 {
			r.srcErr = io.ErrNoProgress
			return r.srcErr
		}
	}
}

var (
	bom         = []byte{0xEF, 0xBB, 0xBF}
	commentLine = []byte(":")  // read-only
	newline     = []byte("\n") // read-only
)

// skipBOM drops one leading UTF-8 byte order mark, however it is split.
func (r *Reader) skipBOM() error {
	for tries := 0; r.w-r.r < len(bom) && tries < 100; tries++ {
		win := r.buf[r.r:r.w]
		if !bytes.HasPrefix(bom, win) {
			break // cannot be a BOM
		}
		// Move the partial prefix to the front and read more behind it.
		n := copy(r.buf, win)
		r.r, r.w = 0, n
		if r.srcErr != nil {
			break
		}
		m, err := r.src.Read(r.buf[n:])
		if m > 0 {
			r.w += m
			if r.activity != nil {
				r.activity(m)
			}
		}
		if err != nil {
			r.srcErr = err
			break
		}
	}
	r.started = true
	if bytes.HasPrefix(r.buf[r.r:r.w], bom) {
		r.r += len(bom)
	}
	return nil
}

// indexEOL returns the index of the first \r or \n in b, or -1. Two
// vectorised byte searches beat one loop over the bytes: lines are long
// (JSON chunks) and \r is rare.
func indexEOL(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.IndexByte(b, '\r')
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	return i
}
