package scrape

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// causeMax bounds a failure cause.
const causeMax = 120

// ScrapeError is a failed scrape: its full text (the URL and what went
// wrong, sanitised) and its cause in a few words, which
// servermetrics.FailureCause reads.
type ScrapeError struct {
	msg, cause string
}

func (e *ScrapeError) Error() string { return e.msg }

// FailureCause is the scrape's cause in a few words: "timeout after 2s",
// "HTTP 503", "parse error: …", "connection refused", "body larger than
// 4194304 bytes".
func (e *ScrapeError) FailureCause() string { return e.cause }

// statusError is a response other than 200.
type statusError int

func (s statusError) Error() string { return fmt.Sprintf("HTTP %d (want 200)", int(s)) }

// parseError is a body that is not a valid exposition.
type parseError struct{ err error }

func (p parseError) Error() string { return p.err.Error() }
func (p parseError) Unwrap() error { return p.err }

// causeOf classifies a scrape's error (not yet cleaned: the caller
// sanitises the result).
func causeOf(err error, timeout time.Duration) string {
	var st statusError
	var pe parseError
	var ne net.Error
	switch {
	case errors.As(err, &st):
		return fmt.Sprintf("HTTP %d", int(st))
	case errors.As(err, &pe):
		return "parse error: " + pe.err.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout after " + timeout.String()
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	}
	return err.Error()
}
