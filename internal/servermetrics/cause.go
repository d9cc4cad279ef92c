package servermetrics

import (
	"errors"

	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// Bounds on the texts of a failed scrape in a View.
const (
	errMax   = 300 // an error text
	causeMax = 120 // a failure cause
)

// CleanError is the one rule for an error that may quote the server: the
// sanitiser (with r's redactions; nil redacts nothing), bounded.
func CleanError(r *sanitize.Redactor, err error) string { return r.String(err.Error(), errMax) }

// FailureCause is what a failed scrape ran into, in a few words and
// sanitised ("timeout after 2s", "HTTP 503", "parse error: …",
// "connection refused"): the error's own FailureCause() when it has one
// (the scraper's errors do), else its cleaned, bounded text; "" for nil.
func FailureCause(err error) string {
	if err == nil {
		return ""
	}
	var c interface{ FailureCause() string }
	if errors.As(err, &c) {
		return sanitize.String(c.FailureCause(), causeMax)
	}
	return sanitize.String(err.Error(), causeMax)
}
