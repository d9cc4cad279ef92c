// Package sse reads the text/event-stream format (server-sent events) as the
// WHATWG HTML standard defines it: \n, \r\n and \r line ends, comments,
// multi-line data joined with \n, event names, last event IDs, and an
// unterminated final event discarded at end of stream. Unknown fields are
// ignored, as the standard says, but one: a non-standard `error:` field (an
// inference server's in-band error) makes its event an Error event, so that
// a failed stream cannot pass as an empty one.
//
// A Reader is built for the hot path of thousands of concurrent streams: it
// reuses its buffers (an Event's Data is valid until the next call to Next),
// bounds memory per stream whatever the server sends (an event, and any line,
// larger than the configured maximum is ErrEventTooLarge; comment lines are
// skipped without being buffered), and reports byte activity (comments and
// keep-alives included) separately from events so a caller can run an idle
// timer on the wire rather than on events.
package sse
