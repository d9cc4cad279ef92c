package protocol

import (
	"errors"
	"fmt"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// ReasonedError is implemented by decoder errors: the ledger reason (one of
// the stream_error reasons) the stream should end with. Use ReasonOf to
// read it from a wrapped error.
type ReasonedError interface {
	error
	Reason() ledger.Reason
}

// ReasonOf returns the ledger reason carried by a decoder error (wrapped or
// not), if any.
func ReasonOf(err error) (ledger.Reason, bool) {
	var re ReasonedError
	if errors.As(err, &re) {
		return re.Reason(), true
	}
	return "", false
}

// adapterError is a decoder error: which API, what went wrong (in the
// adapter's own words, never the payload) and the ledger reason.
type adapterError struct {
	api    string
	reason ledger.Reason
	msg    string
}

func (e *adapterError) Error() string         { return e.api + ": " + e.msg }
func (e *adapterError) Reason() ledger.Reason { return e.reason }

func decodeErr(api string, reason ledger.Reason, format string, args ...any) error {
	return &adapterError{api: api, reason: reason, msg: fmt.Sprintf(format, args...)}
}
