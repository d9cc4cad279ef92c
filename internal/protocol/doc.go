// Package protocol speaks the streaming LLM APIs: one file per API behind the
// Adapter interface (request building + turning server-sent events into
// Events), and a Client that performs one request and stamps every boundary
// of it (dispatch, headers, first byte, first reasoning, first content, each
// content event, end) into a ledger.Record, classifying how it ended into the
// ledger's closed set of outcomes and reasons.
//
// It knows nothing of schedules, percentiles or metrics.
package protocol
